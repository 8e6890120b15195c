import { test } from "node:test";
import assert from "node:assert/strict";
import {
  compareCapability,
  formatComputeCapability,
  parseComputeCapability,
  smDigits,
  smName,
} from "./compute-capability.js";

test("a capability is read from X.Y, sm_XY and compute_XYa, and written back as X.Y, sm_XY and XY", () => {
  for (const [text, major, minor] of [
    ["9.0", 9, 0],
    ["12.1", 12, 1],
    ["sm_121", 12, 1],
    ["compute_90a", 9, 0],
    ["SM_100F", 10, 0],
  ] as const) {
    const cc = parseComputeCapability(text);
    assert.deepEqual(cc, { major, minor }, text);
  }
  const cc = parseComputeCapability("12.1")!;
  assert.equal(formatComputeCapability(cc), "12.1");
  assert.equal(smName(cc), "sm_121");
  assert.equal(smName(cc, "a"), "sm_121a");
  assert.equal(smDigits(cc), "121");
  for (const text of ["", "9", "9.10", "sm_9", "gfx90a", "12.1.0"])
    assert.equal(parseComputeCapability(text), null, text);
});

test("capabilities order by major, then minor (10.0 after 9.0, not before it as text would)", () => {
  const sorted = ["12.1", "9.0", "10.0", "8.9", "12.0"]
    .map((text) => parseComputeCapability(text)!)
    .sort(compareCapability)
    .map(formatComputeCapability);
  assert.deepEqual(sorted, ["8.9", "9.0", "10.0", "12.0", "12.1"]);
});
