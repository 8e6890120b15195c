/** Placeholder until the init command lands: it says so instead of pretending. */
import { UserError } from "../errors.js";
import type { Command } from "./command.js";

export const initCommand: Command = {
  name: "init",
  summary: "init",
  help: "gpuprep init: not available in this build yet",
  async run() {
    throw new UserError(
      "gpuprep init is not available in this build yet",
      "see the README for the commands that are",
    );
  },
};
