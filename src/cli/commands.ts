/** Every command, loaded lazily so `gpuprep kb` does not pay for the doctor's imports and the reverse. */
import type { Command } from "./command.js";

export const COMMANDS: Record<string, () => Promise<Command>> = {
  doctor: async () => (await import("./doctor.js")).doctorCommand,
  scan: async () => (await import("./scan.js")).scanCommand,
  kb: async () => (await import("./kb.js")).kbCommand,
  init: async () => (await import("./init.js")).initCommand,
  validate: async () => (await import("./validate.js")).validateCommand,
  fleet: async () => (await import("./fleet.js")).fleetCommand,
  memory: async () => (await import("./memory.js")).memoryCommand,
};
