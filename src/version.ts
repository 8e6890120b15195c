/** gpuprep's own version, read from package.json so there is one place to bump it. */
import { readFileSync } from "node:fs";

export const TOOL_VERSION: string = (
  JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { version: string }
).version;
