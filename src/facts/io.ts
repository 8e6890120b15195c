/** Reading and writing Facts snapshots (`--save FILE`, `--from FILE`). */
import { parseJsonInput } from "../util/json-input.js";
import { writeOutputFile } from "../util/write-output.js";
import { READ_LIMITS, readTextFile } from "../util/safe-read.js";
import { FACTS_SCHEMA_ID, FACTS_SCHEMA_VERSION, FactsSchema, type Facts } from "./schema.js";
import { UserError } from "../errors.js";

export function parseFacts(text: string, origin: string): Facts {
  const data = parseJsonInput(text, origin, "pass a file written by `gpuprep doctor --save FILE`");
  const header = data as { schema?: unknown; schemaVersion?: unknown } | null;
  if (typeof header !== "object" || header === null || header.schema !== FACTS_SCHEMA_ID) {
    throw new UserError(
      `${origin} is not a gpuprep facts snapshot (no "schema": "${FACTS_SCHEMA_ID}")`,
      "pass a file written by `gpuprep doctor --save FILE`",
    );
  }
  if (header.schemaVersion !== FACTS_SCHEMA_VERSION) {
    throw new UserError(
      `${origin} has facts schema version ${String(header.schemaVersion)}; this gpuprep reads version ${FACTS_SCHEMA_VERSION}`,
      "capture the snapshot again with this gpuprep version (`gpuprep doctor --save FILE`)",
    );
  }
  const parsed = FactsSchema.safeParse(data);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const where = issue ? issue.path.join(".") || "(top level)" : "(unknown)";
    throw new UserError(
      `${origin} does not match the facts schema at ${where}: ${issue?.message ?? "invalid"}`,
      "the file was edited or truncated; capture it again with `gpuprep doctor --save FILE`",
    );
  }
  return parsed.data;
}

export function readFactsFile(path: string): Facts {
  const text = readTextFile(path, { maxBytes: READ_LIMITS.snapshot, hint: "check the path given to --from" });
  return parseFacts(text, path);
}

export function writeFactsFile(path: string, facts: Facts): void {
  writeOutputFile(path, JSON.stringify(facts, null, 1) + "\n", "--save");
}
