# shellcheck shell=bash
# Sourced by .ci/run: a Docker engine of the run's own for the tests that build or run containers
# (test/init/setup-safety.test.ts; src/transports/transports.test.ts where an image is at hand).
# It listens on a private socket with its own data root, so a developer's engine, images and cache
# are never touched, and it is stopped and deleted when the run exits: no daemon outlives CI.
# (test/init/e2e/docker-e2e.sh starts another of its own, the same way.)
ci_engine_root=""
ci_dockerd_pid=""

stop_ci_engine() {
  if [ -n "$ci_dockerd_pid" ] && kill -0 "$ci_dockerd_pid" 2> /dev/null; then
    kill "$ci_dockerd_pid"
    for _ in $(seq 30); do
      kill -0 "$ci_dockerd_pid" 2> /dev/null || break
      sleep 1
    done
    kill -9 "$ci_dockerd_pid" 2> /dev/null || true
  fi
  ci_dockerd_pid=""
  if [ -n "$ci_engine_root" ]; then
    # A mount left by a killed engine would keep rm from freeing the layers.
    grep -o " $ci_engine_root/[^ ]*" /proc/self/mounts 2> /dev/null | sort -r | xargs -r -n 1 umount -l 2> /dev/null || true
    rm -rf "$ci_engine_root"
    ci_engine_root=""
  fi
}

# Returns 1 (and says why) when no engine answers; the tests that need one then fail naming it.
start_ci_engine() {
  ci_engine_root="$(mktemp -d /tmp/gpuprep-ci-engine.XXXXXX)"
  mkdir -p "$ci_engine_root/data" "$ci_engine_root/exec"
  dockerd --storage-driver=vfs --data-root "$ci_engine_root/data" --exec-root "$ci_engine_root/exec" \
    --pidfile "$ci_engine_root/dockerd.pid" --host "unix://$ci_engine_root/docker.sock" \
    --iptables=false --bridge=none > "$ci_engine_root/dockerd.log" 2>&1 &
  ci_dockerd_pid=$!
  export DOCKER_HOST="unix://$ci_engine_root/docker.sock"
  for _ in $(seq 60); do
    docker info > /dev/null 2>&1 && return 0
    kill -0 "$ci_dockerd_pid" 2> /dev/null || break
    sleep 1
  done
  echo "dockerd did not start: $(tail -n 5 "$ci_engine_root/dockerd.log")" >&2
  return 1
}
