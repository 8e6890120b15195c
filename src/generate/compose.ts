/**
 * compose.yaml: the same container the run script starts (GPU access, a sized shm or shared IPC,
 * NVIDIA's memlock and stack limits, cache/data/checkpoint volumes, credentials read-only), plus an
 * optional Jupyter service bound to 127.0.0.1 that refuses to start without a token of at least
 * 32 characters. The app runs as the host user unless --root.
 */
import { stringify } from "yaml";
import type { Plan } from "../plan/types.js";
import { hostUserInImage } from "./dockerfile.js";
import { composeLiteral } from "./quote.js";
import {
  JUPYTER_PORT,
  JUPYTER_TOKEN_MIN,
  MEMLOCK,
  STACK_BYTES,
  WORKDIR,
  header,
  imageName,
  volumes,
  MASKED_IN_WORKDIR,
  sharedMemory,
  type VolumeSpec,
} from "./paths.js";

/** Short syntax; a --volume's own text is literal (our ${HOME} is meant for Compose to expand). */
function volumeText(v: VolumeSpec): string {
  const host = v.fromFlag ? composeLiteral(v.host) : v.host;
  const container = v.fromFlag ? composeLiteral(v.container) : v.container;
  return `${host}:${container}${v.readOnly ? ":ro" : ""}`;
}

/** The ids compose builds the image's user with, and Jupyter runs as (SETUP.md says to export them). */
const HOST_USER = "${GPUPREP_UID:-1000}:${GPUPREP_GID:-1000}";

export function renderCompose(plan: Plan): string {
  const service: Record<string, unknown> = {
    build: {
      context: ".",
      dockerfile: "Dockerfile",
      args: { USER_UID: "${GPUPREP_UID:-1000}", USER_GID: "${GPUPREP_GID:-1000}" },
    },
    image: `${imageName(plan)}:latest`,
  };
  // The image gets a user with the host user's ids for --non-root, and for Jupyter, which runs as it.
  if (!hostUserInImage(plan)) delete (service["build"] as Record<string, unknown>)["args"];
  const shm = sharedMemory(plan);
  if (shm.ipcHost) service["ipc"] = "host";
  else service["shm_size"] = shm.shmSize;
  service["ulimits"] = { memlock: MEMLOCK, stack: STACK_BYTES };
  service["deploy"] = {
    resources: { reservations: { devices: [{ driver: "nvidia", count: "all", capabilities: ["gpu"] }] } },
  };
  // Passed through from the host when set; never written into a file.
  service["environment"] = ["HF_TOKEN", "WANDB_API_KEY"];
  // The anonymous volumes after the project mount hide a host venv from the image's Python.
  service["volumes"] = [...volumes(plan).map(volumeText), ...MASKED_IN_WORKDIR];
  service["working_dir"] = WORKDIR;
  // The app runs as the host user unless --root (the image's USER is that user; naming it here
  // too keeps it so where the image was built elsewhere).
  if (plan.options.nonRoot) service["user"] = HOST_USER;
  service["stdin_open"] = true;
  service["tty"] = true;
  const services: Record<string, unknown> = { app: service };
  if (plan.options.jupyter) {
    const jupyter: Record<string, unknown> = { ...service };
    delete jupyter["stdin_open"];
    delete jupyter["tty"];
    jupyter["environment"] = [...(service["environment"] as string[]), "JUPYTER_TOKEN"];
    jupyter["ports"] = [`127.0.0.1:${JUPYTER_PORT}:${JUPYTER_PORT}`];
    // Never root: a notebook can run anything, and files it writes to the project stay the user's.
    // With --non-root the image's USER is that user already; else the service names it.
    if (!plan.options.nonRoot) jupyter["user"] = HOST_USER;
    // Listening on all interfaces inside the container is what makes the port mapping work; the
    // mapping itself binds to the host's loopback only.
    jupyter["command"] = [
      "sh",
      "-c",
      `if [ "$\${#JUPYTER_TOKEN}" -lt ${JUPYTER_TOKEN_MIN} ]; then echo "set JUPYTER_TOKEN to at least ${JUPYTER_TOKEN_MIN} random characters (export JUPYTER_TOKEN=$$(openssl rand -hex 24)) before starting jupyter" >&2; exit 1; fi; exec python3 -m jupyter lab --ip=0.0.0.0 --port=${JUPYTER_PORT} --no-browser`,
    ];
    services["jupyter"] = jupyter;
  }
  const body = stringify({ services }, { lineWidth: 0 });
  return `${header(plan, "#")}# Start: docker compose up -d app && docker compose exec app bash (or scripts/run-container.sh)\n${body}`;
}
