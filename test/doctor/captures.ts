/** Loading the real facts snapshots under test/fixtures/facts for the table-driven suites. */
import { readdirSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { readFactsFile } from "../../src/facts/io.js";
import type { Facts } from "../../src/facts/schema.js";

/** dist/test/doctor -> the repository's test/fixtures/facts (fixtures are not copied into dist). */
export const CAPTURES_DIR = fileURLToPath(new URL("../../../test/fixtures/facts/", import.meta.url));

export function capturePath(name: string): string {
  return `${CAPTURES_DIR}${name}.json`;
}

export function loadCapture(name: string): Facts {
  return readFactsFile(capturePath(name));
}

export function captureNames(): string[] {
  return readdirSync(CAPTURES_DIR)
    .filter((f) => f.endsWith(".json"))
    .map((f) => f.slice(0, -".json".length))
    .sort();
}
