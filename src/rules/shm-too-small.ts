/** /dev/shm in a container is Docker's 64 MiB default: DataLoader workers die with a bus error. */
import type { Rule } from "../findings/types.js";
import { ev, makeFinding } from "../findings/finding.js";

/** Below this a multi-worker DataLoader with image batches runs out; 1 GiB is a floor, not a target. */
const MIN_SHM_BYTES = 1024 ** 3;

const mib = (bytes: number) => `${Math.round(bytes / 1024 ** 2)} MiB`;

export const shmTooSmall: Rule = {
  id: "shm-too-small",
  title: "/dev/shm is too small for DataLoader workers",
  severity: "warning",
  check(facts) {
    const { container, shm } = facts.host;
    if (!container.inContainer || shm.sizeBytes === null || shm.sizeBytes >= MIN_SHM_BYTES) return [];
    return [
      makeFinding(this, {
        message:
          `/dev/shm in this container is ${mib(shm.sizeBytes)}: DataLoader workers pass batches through it and die with ` +
          `"ERROR: Unexpected bus error encountered in worker. This might be caused by insufficient shared memory (shm)".`,
        evidence: [
          ev("/dev/shm size", mib(shm.sizeBytes)),
          ev("/dev/shm free", shm.freeBytes === null ? null : mib(shm.freeBytes)),
          ev("container", container.runtime ?? container.markers.join(", ")),
        ],
        fix: {
          summary: "Start the container with the host's IPC namespace or a larger /dev/shm.",
          commands: [
            "docker run --ipc=host ...   # or: docker run --shm-size=16g ...",
            "# compose.yaml: ipc: host   (or shm_size: 16gb)",
            "# Kubernetes: mount an emptyDir with medium: Memory at /dev/shm",
          ],
        },
      }),
    ];
  },
};
