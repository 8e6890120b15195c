/** Placeholder until the scan command lands: it says so instead of pretending. */
import { UserError } from "../errors.js";
import type { Command } from "./command.js";

export const scanCommand: Command = {
  name: "scan",
  summary: "scan",
  help: "gpuprep scan: not available in this build yet",
  async run() {
    throw new UserError(
      "gpuprep scan is not available in this build yet",
      "see the README for the commands that are",
    );
  },
};
