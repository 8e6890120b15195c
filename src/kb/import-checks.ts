/**
 * The import-checks table (data/import-checks.json) read alone and without its zod schema: doctor
 * passes it to the probe before it loads the knowledge base (issue 17: nothing heavy before the
 * probe starts). The same file is checked against importCheckRowSchema wherever the whole KB
 * loads (loadPackagedData, src/kb/data.test.ts), so a malformed row still fails loudly there.
 */
import { readFileSync } from "node:fs";
import type { ImportCheckRow } from "./types.js";

let rows: ImportCheckRow[] | null = null;

/** The modules doctor's probe (when installed) and validate (always) import-check. */
export function importChecks(): ImportCheckRow[] {
  rows ??= (
    JSON.parse(readFileSync(new URL("./data/import-checks.json", import.meta.url), "utf8")) as {
      rows: ImportCheckRow[];
    }
  ).rows;
  return rows;
}
