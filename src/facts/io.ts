/** Reading and writing Facts snapshots (`--save FILE`, `--from FILE`). */
import { parseJsonInput } from "../util/json-input.js";
import { writeOutputFile } from "../util/write-output.js";
import { READ_LIMITS, printablePrefix, readTextFile } from "../util/safe-read.js";
import { FACTS_SCHEMA_ID, FACTS_SCHEMA_VERSION, FactsSchema, type Facts } from "./schema.js";
import { FACTS_READABLE_VERSIONS } from "./schema-id.js";
import { UserError } from "../errors.js";

/**
 * The schemaVersion a file claims, safe to print: String() of a 10,000-deep array overflows the
 * stack, and a string may hold escapes or run for megabytes.
 */
function versionText(version: unknown): string {
  if (Array.isArray(version)) return "(an array)";
  if (typeof version === "object" && version !== null) return "(an object)";
  return printablePrefix(String(version), 20);
}

export function parseFacts(text: string, origin: string): Facts {
  const data = parseJsonInput(text, origin, "pass a file written by `gpuprep doctor --save FILE`");
  const header = data as { schema?: unknown; schemaVersion?: unknown } | null;
  if (typeof header !== "object" || header === null || header.schema !== FACTS_SCHEMA_ID) {
    throw new UserError(
      `${origin} is not a gpuprep facts snapshot (no "schema": "${FACTS_SCHEMA_ID}")`,
      "pass a file written by `gpuprep doctor --save FILE`",
    );
  }
  if (typeof header.schemaVersion !== "number" || !FACTS_READABLE_VERSIONS.includes(header.schemaVersion)) {
    throw new UserError(
      `${origin} has facts schema version ${versionText(header.schemaVersion)}; this gpuprep reads versions ${FACTS_READABLE_VERSIONS.join(" and ")}`,
      "capture the snapshot again with this gpuprep version (`gpuprep doctor --save FILE`)",
    );
  }
  // An older version is read as the current one: the schema maps its renamed keys (schema-id.ts).
  const parsed = FactsSchema.safeParse({ ...header, schemaVersion: FACTS_SCHEMA_VERSION });
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    // Keys and values in the path and the message come from the file: printed only sanitized and short.
    const where = issue ? printablePrefix(issue.path.join("."), 80) || "(top level)" : "(unknown)";
    throw new UserError(
      `${origin} does not match the facts schema at ${where}: ${printablePrefix(issue?.message ?? "invalid", 120)}`,
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
