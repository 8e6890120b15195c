/** Writing a file the user asked for (--save, --sarif, --junit, --html): failures are UserErrors. */
import { writeFileSync } from "node:fs";
import { UserError, errorMessage } from "../errors.js";

export function writeOutputFile(path: string, content: string, flag: string): void {
  try {
    writeFileSync(path, content);
  } catch (error) {
    throw new UserError(`cannot write ${path}: ${errorMessage(error)}`, `check the path given to ${flag}`);
  }
}
