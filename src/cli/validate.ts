/** Placeholder until the validate command lands: it says so instead of pretending. */
import { UserError } from "../errors.js";
import type { Command } from "./command.js";

export const validateCommand: Command = {
  name: "validate",
  summary: "validate",
  help: "gpuprep validate: not available in this build yet",
  async run() {
    throw new UserError(
      "gpuprep validate is not available in this build yet",
      "see the README for the commands that are",
    );
  },
};
