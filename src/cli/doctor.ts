/** Placeholder until the doctor command lands: it says so instead of pretending. */
import { UserError } from "../errors.js";
import type { Command } from "./command.js";

export const doctorCommand: Command = {
  name: "doctor",
  summary: "doctor",
  help: "gpuprep doctor: not available in this build yet",
  async run() {
    throw new UserError(
      "gpuprep doctor is not available in this build yet",
      "see the README for the commands that are",
    );
  },
};
