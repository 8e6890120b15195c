/** No usable NVIDIA driver: torch can only run on the CPU here. */
import type { Rule } from "../findings/types.js";
import { ev, makeFinding, type FindingParts } from "../findings/finding.js";
import type { Facts } from "../facts/schema.js";

type NvidiaFacts = Facts["host"]["nvidia"];
/** A finding's words and fix; the evidence is the same for every case. */
type Case = Omit<FindingParts, "evidence">;

const CONTAINER_FIX = "docker run --gpus all ... (or --runtime=nvidia; podman: --device nvidia.com/gpu=all)";

function smiFailed(nvidia: NvidiaFacts, container: boolean): Case {
  return {
    message: `nvidia-smi is installed but failed: ${nvidia.error ?? "no message"}; CUDA cannot reach a GPU.`,
    fix: {
      summary: container
        ? "Start the container with the GPU passed through, and check the driver on the host."
        : "Load (or reinstall) the NVIDIA kernel driver matching the user-space driver, then reboot if the versions differ.",
      commands: container
        ? [CONTAINER_FIX, "nvidia-smi   # on the host"]
        : ["sudo modprobe nvidia", "dmesg | grep -i nvidia", "nvidia-smi"],
    },
  };
}

function smiMissingBesideDriver(container: boolean): Case {
  return {
    severity: "warning",
    message:
      "The NVIDIA kernel driver is loaded but nvidia-smi is not on PATH, so the driver version cannot be checked.",
    fix: {
      summary: container
        ? "Expose the driver utilities in the container (NVIDIA_DRIVER_CAPABILITIES must include utility)."
        : "Install the NVIDIA user-space utilities of the same driver version.",
      commands: container
        ? ["docker run --gpus all -e NVIDIA_DRIVER_CAPABILITIES=compute,utility ..."]
        : ["apt-cache policy nvidia-smi   # or your distribution's nvidia-utils package"],
    },
  };
}

function noDriver(container: boolean): Case {
  return {
    severity: "info",
    message: container
      ? "No NVIDIA driver is visible in this container: torch will run on the CPU only."
      : "No NVIDIA driver on this machine: torch will run on the CPU only.",
    fix: {
      summary: container
        ? "If the host has an NVIDIA GPU, start the container with it passed through."
        : "Nothing to do on a machine without an NVIDIA GPU; on a GPU machine install the NVIDIA driver.",
      commands: container ? [CONTAINER_FIX] : [],
    },
  };
}

function caseOf(nvidia: NvidiaFacts, container: boolean): Case | null {
  if (nvidia.status === "failed") return smiFailed(nvidia, container);
  if (nvidia.status === "not-found" && nvidia.kernelModule !== null) return smiMissingBesideDriver(container);
  if (nvidia.status === "not-found") return noDriver(container);
  return null;
}

export const nvidiaDriverUnavailable: Rule = {
  id: "nvidia-driver-unavailable",
  title: "No usable NVIDIA driver",
  severity: "error",
  check(facts) {
    const nvidia = facts.host.nvidia;
    const container = facts.host.container.inContainer;
    const found = caseOf(nvidia, container);
    if (!found) return [];
    const evidence = [
      ev("nvidia-smi", nvidia.status),
      ev("nvidia-smi error", nvidia.error),
      ev("/proc/driver/nvidia/version", nvidia.kernelModule),
      ev("in container", container ? (facts.host.container.runtime ?? "yes") : "no"),
    ];
    return [makeFinding(this, { ...found, evidence })];
  },
};
