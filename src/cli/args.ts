/** Flag parsing on node:util's parseArgs, turning its errors into one-line UserErrors. */
import { parseArgs, type ParseArgsConfig } from "node:util";
import { UserError, errorMessage } from "../errors.js";

export type ParsedArgs<T extends ParseArgsConfig> = ReturnType<typeof parseArgs<T>>;

/** parseArgs in strict mode; unknown flags and missing values become `gpuprep: error: ...` plus a hint. */
export function parseCommandArgs<T extends ParseArgsConfig>(command: string, config: T): ParsedArgs<T> {
  try {
    return parseArgs(config); // strict by default: unknown flags throw
  } catch (error) {
    // parseArgs messages run on with advice about "--"; keep the first sentence.
    const message = errorMessage(error).split(". ")[0]?.replace(/\.$/, "") ?? "invalid arguments";
    throw new UserError(`${command}: ${message}`, `run \`gpuprep ${command} --help\` for the flags it takes`);
  }
}
