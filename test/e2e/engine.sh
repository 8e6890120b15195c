# shellcheck shell=bash
# Sourced by test/e2e/prelude.sh (the Docker end-to-end scripts) and by .ci/run:
# a Docker engine of their own on a private socket and data root, the Debian + torch rootfs image
# they build on, and cleanup. A developer's running engine, its images and cache are never touched.
# Expects: set -euo pipefail, $work (a temp dir), $cache (kept between runs), step and fail.
: "${work:?}" "${cache:?}"

# Debian's docker client matches Debian's engine and builds with its built-in BuildKit; a newer
# client elsewhere on PATH may insist on the buildx plugin, which Debian does not package.
if [ -x /usr/bin/docker ]; then
  mkdir -p "$work/bin"
  ln -sf /usr/bin/docker "$work/bin/docker"
  export PATH="$work/bin:$PATH"
fi

engine_root="$cache/engine.$$"
dockerd_pid=""

stop_engine() {
  if [ -n "$dockerd_pid" ] && kill -0 "$dockerd_pid" 2> /dev/null; then
    kill "$dockerd_pid"
    for _ in $(seq 30); do
      kill -0 "$dockerd_pid" 2> /dev/null || break
      sleep 1
    done
    kill -9 "$dockerd_pid" 2> /dev/null || true
  fi
  dockerd_pid=""
  # A mount left by a killed engine would keep rm from freeing the layers.
  grep -o " $engine_root/[^ ]*" /proc/self/mounts 2> /dev/null | sort -r | xargs -r -n 1 umount -l 2> /dev/null || true
  rm -rf "$engine_root"
}

engine_cleanup() {
  local status=$?
  stop_engine
  if [ "$status" = 0 ]; then rm -rf "$work"; else echo "(kept $work for inspection)" >&2; fi
}
trap engine_cleanup EXIT

# overlay2 where the kernel allows overlay mounts here, else vfs (which copies every layer: about
# 20 GB for the init e2e, against 2 GB with overlay2); the data root goes with the engine.
start_engine() {
  local driver
  for driver in overlay2 vfs; do
    mkdir -p "$engine_root/data" "$engine_root/exec"
    dockerd --storage-driver="$driver" --data-root "$engine_root/data" --exec-root "$engine_root/exec" \
      --pidfile "$engine_root/dockerd.pid" --host "unix://$engine_root/docker.sock" \
      --iptables=false --bridge=none > "$work/dockerd-$driver.log" 2>&1 &
    dockerd_pid=$!
    export DOCKER_HOST="unix://$engine_root/docker.sock"
    for _ in $(seq 60); do
      if docker info > /dev/null 2>&1; then
        step "docker engine: $driver storage, socket $engine_root/docker.sock"
        return 0
      fi
      kill -0 "$dockerd_pid" 2> /dev/null || break
      sleep 1
    done
    stop_engine
  done
  fail "dockerd did not start: $(tail -n 5 "$work/dockerd-vfs.log")"
}

# gpuprep-test/debian-torch:bookworm: debootstrap'd Debian with python3-torch (CPU), the tar cached
# in $cache. Two scripts may run at once: the first to take the lock builds the tar.
rootfs_image="gpuprep-test/debian-torch:bookworm"
ensure_rootfs_image() {
  docker image inspect "$rootfs_image" > /dev/null 2>&1 && return 0
  (
    flock 9
    if [ ! -s "$cache/rootfs.tar" ]; then
      mirror="${DEBIAN_MIRROR:-http://deb.debian.org/debian}"
      debootstrap --variant=minbase --include=python3,python3-pip,python3-numpy,python3-torch \
        bookworm "$work/rootfs" "$mirror" > "$work/debootstrap.log" 2>&1 ||
        fail "debootstrap: $(tail -n 5 "$work/debootstrap.log")"
      tar -C "$work/rootfs" -cf "$cache/rootfs.tar.part" .
      mv "$cache/rootfs.tar.part" "$cache/rootfs.tar"
      rm -rf "$work/rootfs"
    fi
  ) 9> "$cache/rootfs.lock"
  docker import "$cache/rootfs.tar" "$rootfs_image" > /dev/null
}
