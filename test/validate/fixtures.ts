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

/** The payload's CPU test mode: torch 1.13 (no SDPA) by default, or torch 2.13 (SDPA through torch.nn.attention). */
export function cpuModePayload(torch: "1.13" | "2.13" = "1.13"): Payload {
  const name = torch === "1.13" ? "payload-cpu-mode.json" : "payload-cpu-mode-torch2.json";
  return parsePayload(JSON.parse(readFileSync(join(FIXTURES, name), "utf8")), name);
}
