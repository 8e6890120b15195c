/** Loading the real captures under test/fixtures/validate (see the README there). */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { parsePayload, type Payload } from "../../src/validate/payload.js";
import type { ValidateReport } from "../../src/validate/report.js";

/** Tests run from dist/test/validate; fixtures stay in the source tree. */
export const FIXTURES = join(import.meta.dirname, "..", "..", "..", "test", "fixtures", "validate");

export function savedReports(): Array<{ file: string; report: ValidateReport }> {
  return readdirSync(FIXTURES)
    .filter((name) => name.startsWith("report-") && name.endsWith(".json"))
    .map((name) => ({
      file: join(FIXTURES, name),
      report: JSON.parse(readFileSync(join(FIXTURES, name), "utf8")) as ValidateReport,
    }));
}

export function cpuModePayload(): Payload {
  return parsePayload(
    JSON.parse(readFileSync(join(FIXTURES, "payload-cpu-mode.json"), "utf8")),
    "payload-cpu-mode.json",
  );
}
