/**
 * scripts/run-container.sh: build the image and start the container with the flags compose.yaml
 * uses. It checks the driver the image needs before starting, and starts without --gpus (with a
 * warning) where the host has no NVIDIA GPU, so the same script serves CI machines.
 */
import type { ContainerPlan } from "../plan/types.js";
import { VERSION_AT_LEAST } from "./shell.js";
import { shellDoubleQuoted, shellQuote } from "./quote.js";
import { hostUserInImage } from "./dockerfile.js";
import {
  MASKED_IN_WORKDIR,
  MEMLOCK,
  STACK_BYTES,
  header,
  sharedMemory,
  imageName,
  volumes,
  type VolumeSpec,
} from "./paths.js";

/** The host side as one shell word: our own paths expand $PWD/$HOME; a --volume path is literal. */
function hostPath(v: VolumeSpec): string {
  if (v.fromFlag) return shellQuote(v.host);
  if (v.host === ".") return '"$PWD"';
  if (v.host.startsWith("./")) return `"$PWD/${v.host.slice(2)}"`;
  return `"${v.host.replace("${HOME}", "$HOME")}"`;
}

function mount(v: VolumeSpec): string {
  const container = v.fromFlag ? shellQuote(v.container) : v.container;
  return `  -v ${hostPath(v)}:${container}${v.readOnly ? ":ro" : ""}`;
}

/** Starts with --gpus all where a driver new enough for the image's CUDA is found; stops where it is too old. */
function gpuFlagsBlock(plan: ContainerPlan): string {
  return `gpu_flags=()
driver=""
if [ "\${GPUPREP_NO_GPU:-0}" != 1 ] && command -v nvidia-smi > /dev/null 2>&1; then
  driver="$(nvidia-smi --query-gpu=driver_version --format=csv,noheader 2> /dev/null | head -n 1 || true)"
fi
if [ -n "$driver" ]; then
  if ! version_at_least "$driver" "$REQUIRED_DRIVER"; then
    echo "error: NVIDIA driver $driver is older than $REQUIRED_DRIVER, which CUDA ${plan.container.image.cuda} in ${plan.container.ref} needs" >&2
    echo "hint: update the driver, or plan for this one: gpuprep init --driver $driver" >&2
    exit 1
  fi
  gpu_flags=(--gpus all)
else
  echo "warning: no NVIDIA GPU or driver found here (nvidia-smi); starting without --gpus" >&2
fi`;
}

/** The docker run line: the flags gathered above, shared memory, limits, credentials from the environment, the mounts. */
function dockerRunCommand(plan: ContainerPlan): string {
  // Anonymous volumes after the project mount: a host venv never shadows the image's torch.
  const mounts = [...volumes(plan).map(mount), ...MASKED_IN_WORKDIR.map((path) => `  -v ${path}`)];
  const memory = sharedMemory(plan);
  const shm = memory.ipcHost ? "--ipc=host" : `--shm-size=${memory.shmSize}`;
  // The app runs as the host user unless --root: files it writes to the project stay the user's.
  const runAs = plan.options.nonRoot ? ` --user "$(id -u):$(id -g)"` : "";
  return `exec docker run --rm \\
  \${tty_flags[@]+"\${tty_flags[@]}"} \\
  \${gpu_flags[@]+"\${gpu_flags[@]}"} \\
  \${network_flags[@]+"\${network_flags[@]}"} \\
  ${shm}${runAs} --ulimit memlock="\${MEMLOCK_LIMIT:-${MEMLOCK}}" --ulimit stack=${STACK_BYTES} \\
  -e HF_TOKEN -e WANDB_API_KEY \\
${mounts.join(" \\\n")} \\
  "$IMAGE" "$@"`;
}

export function renderRunContainer(plan: ContainerPlan): string {
  const image = plan.container.image;
  const vols = volumes(plan);
  const created = [...new Set(vols.filter((v) => v.create).map(hostPath))];
  const userArgs = hostUserInImage(plan)
    ? ` --build-arg USER_UID="$(id -u)" --build-arg USER_GID="$(id -g)"`
    : "";
  return `#!/usr/bin/env bash
${header(plan, "#")}#
# usage: scripts/run-container.sh [--no-build] [COMMAND ...]   (default COMMAND: bash)
# env:   IMAGE (default ${imageName(plan)}:latest), GPUPREP_NO_GPU=1 to start without GPUs,
#        DOCKER_NETWORK (e.g. host or none) for hosts whose Docker engine has no default bridge,
#        MEMLOCK_LIMIT (bytes) where the host may not lift the locked-memory limit (default -1: none),
#        BASE_IMAGE to build FROM a mirror of ${plan.container.ref} (a local registry, a test stand-in)
set -euo pipefail
cd "$(dirname "\${BASH_SOURCE[0]}")/.."

IMAGE="\${IMAGE:-${imageName(plan)}:latest}"
# ${plan.container.ref} is built with CUDA ${image.cuda}.
REQUIRED_DRIVER=${shellDoubleQuoted(plan.requiredDriver)}

# True when version $1 >= version $2 (dotted numbers).
${VERSION_AT_LEAST}

${gpuFlagsBlock(plan)}

network_flags=()
if [ -n "\${DOCKER_NETWORK:-}" ]; then network_flags=(--network "$DOCKER_NETWORK"); fi
base_flags=()
if [ -n "\${BASE_IMAGE:-}" ]; then base_flags=(--build-arg "BASE_IMAGE=$BASE_IMAGE"); fi

if [ "\${1:-}" = "--no-build" ]; then
  shift
else
  DOCKER_BUILDKIT=1 docker build${userArgs} \${base_flags[@]+"\${base_flags[@]}"} ${plan.options.wheelhouse ? "--network none" : '${network_flags[@]+"${network_flags[@]}"}'} --tag "$IMAGE" .
fi

mkdir -p ${created.join(" ")}
tty_flags=()
if [ -t 0 ] && [ -t 1 ]; then tty_flags=(-it); fi
if [ "$#" -eq 0 ]; then set -- bash; fi

${dockerRunCommand(plan)}
`;
}
