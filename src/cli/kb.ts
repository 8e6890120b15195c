/** Placeholder until the kb command lands: it says so instead of pretending. */
import { UserError } from "../errors.js";
import type { Command } from "./command.js";

export const kbCommand: Command = {
  name: "kb",
  summary: "kb",
  help: "gpuprep kb: not available in this build yet",
  async run() {
    throw new UserError(
      "gpuprep kb is not available in this build yet",
      "see the README for the commands that are",
    );
  },
};
