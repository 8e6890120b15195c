/** Where things live in the generated container, shared by every generator so they agree. */
import type { Plan } from "../plan/types.js";
import { parseVolumeFlag } from "../plan/volume.js";
import { singleLine } from "../util/single-line.js";

export const WORKDIR = "/workspace";
const CACHE_DIR = "/cache";
export const HF_HOME = `${CACHE_DIR}/huggingface`;
export const TORCH_HOME = `${CACHE_DIR}/torch`;
const CREDENTIALS_DIR = "/run/credentials";
export const CONSTRAINTS_FILE = "gpuprep-constraints.txt";
export const REQUIREMENTS_FILE = "gpuprep-requirements.txt";
export const GPUPREP_DIR_IN_IMAGE = "/opt/gpuprep";
/** NVIDIA's run command for its PyTorch images: docker run --gpus all --ipc=host --ulimit memlock=-1 --ulimit stack=67108864 */
export const MEMLOCK = -1;
export const STACK_BYTES = 67108864;
export const JUPYTER_PORT = 8888;
/** Jupyter refuses a shorter token: 32 characters of `openssl rand -hex 24` (48) is the floor. */
export const JUPYTER_TOKEN_MIN = 32;

/**
 * /dev/shm of the container unless --shm-size host asks for the host's IPC namespace: DataLoader
 * workers pass batches through /dev/shm and Docker's default 64 MB makes them die with a bus
 * error; `ipc: host` would also share the host's shared-memory segments and semaphores with the
 * container (issue 28). A tmpfs limit, not a reservation: only what is written uses memory.
 */
const DEFAULT_SHM_SIZE = "16g";

type SharedMemory = { ipcHost: true } | { ipcHost: false; shmSize: string };

export function sharedMemory(plan: Plan): SharedMemory {
  const asked = plan.options.shmSize;
  if (asked === "host") return { ipcHost: true };
  return { ipcHost: false, shmSize: asked ?? DEFAULT_SHM_SIZE };
}
/**
 * Paths under the project mount that an anonymous volume hides inside the container: a host venv
 * there would shadow the image's torch (seed 001: a Jupyter kernel picked the mounted
 * /workspace/.venv with a torch built without sm_120).
 */
export const MASKED_IN_WORKDIR = [`${WORKDIR}/.venv`];

/** A Docker image name from the project's name: lower case, [a-z0-9._-]. */
export function imageName(plan: Plan): string {
  const slug = plan.project.name
    .toLowerCase()
    .replace(/[^a-z0-9._-]+/g, "-")
    .replace(/^[^a-z0-9]+|[^a-z0-9]+$/g, "");
  return `${slug || "project"}-gpu`;
}

/** Host side of the volumes, as compose and the run script both spell them. */
export interface VolumeSpec {
  host: string;
  container: string;
  readOnly: boolean;
  /** Create the host directory before starting, so Docker does not create it owned by root. */
  create: boolean;
  why: string;
  /** From --volume: the user's text, quoted literally everywhere (no $HOME or ./ expansion by us). */
  fromFlag: boolean;
}

/** A mount gpuprep sets up: read-write and created on the host beforehand unless said otherwise. */
function mount(
  host: string,
  container: string,
  why: string,
  { readOnly = false, create = true }: { readOnly?: boolean; create?: boolean } = {},
): VolumeSpec {
  return { host, container, readOnly, create, fromFlag: false, why };
}

/** The mounts of every container plan: the project, the caches, data, checkpoints and credentials. */
function standardVolumes(): VolumeSpec[] {
  return [
    mount(".", WORKDIR, "the project source, edited on the host", { create: false }),
    // The model and dataset caches, not the whole ~/.cache/huggingface: that directory also holds
    // the login token (token, stored_tokens), which the container would read and could rewrite.
    // The container authenticates with HF_TOKEN from the environment instead (issue 28).
    mount(
      "${HOME}/.cache/huggingface/hub",
      `${HF_HOME}/hub`,
      "model cache: downloads survive the container and are shared with the host (the login token is not mounted: HF_TOKEN comes from the environment)",
    ),
    mount(
      "${HOME}/.cache/huggingface/datasets",
      `${HF_HOME}/datasets`,
      "datasets cache, shared with the host",
    ),
    mount("${HOME}/.cache/torch", TORCH_HOME, "torch hub and compiled-kernel caches"),
    mount("./data", `${WORKDIR}/data`, "datasets (kept out of the image by .dockerignore)"),
    mount("./checkpoints", `${WORKDIR}/checkpoints`, "checkpoints survive the container"),
    mount(
      "./.credentials",
      CREDENTIALS_DIR,
      "credentials, read-only (e.g. .credentials/hf_token); never copied into the image",
      { readOnly: true },
    ),
    // The project mount would otherwise expose the same files read-write at /workspace/.credentials.
    mount(
      "./.credentials",
      `${WORKDIR}/.credentials`,
      "the same credentials where the project mount shows them, read-only there too",
      { readOnly: true },
    ),
  ];
}

export function volumes(plan: Plan): VolumeSpec[] {
  const asked = plan.options.volumes.map((spec): VolumeSpec => {
    const { host, container, readOnly } = parseVolumeFlag(spec);
    return { host, container, readOnly, create: false, fromFlag: true, why: "asked with --volume" };
  });
  return [...standardVolumes(), ...asked];
}

/** A generated file's first lines: what made it, and that SETUP.md explains it. */
export function header(plan: Plan, comment: string): string {
  // Names come from the project and the snapshot: one line each, or they would end the comment.
  const project = singleLine(plan.project.name);
  const gpu = singleLine(plan.target.gpuName);
  return `${comment} Generated by \`gpuprep init\` for ${project} on ${gpu} (compute capability ${plan.target.computeCapability}, ${plan.target.cpuArch}).\n${comment} SETUP.md explains every choice. Edit freely: gpuprep will not overwrite an edited file without --force.\n`;
}

/** The script a plan's setup starts with: the container's, or the native environment's own. */
export function setupScript(plan: Plan): string {
  if (plan.strategy === "container") return "scripts/run-container.sh";
  const scripts = {
    uv: "scripts/setup-native.sh",
    pixi: "scripts/setup-pixi.sh",
    conda: "scripts/setup-conda.sh",
  } as const;
  return scripts[plan.native.environment];
}
