/**
 * Which modules doctor's probe import-checks: the KB rows marked `doctor` (issue 17: an import of
 * torchvision took 7.9 s on the H100 and doctor's time is its slowest child), while validate
 * import-checks every row.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { knownExtensionArgs } from "../../src/gather/probe-run.js";
import { importChecks } from "../../src/kb/import-checks.js";
import { payloadArgs } from "../../src/validate/payload.js";

test("doctor's probe gets the rows marked doctor, and only those", () => {
  const [flag, word] = knownExtensionArgs();
  assert.equal(flag, "--extensions");
  const modules = word!.split(" ").map((entry) => entry.split("=")[0]);
  assert.deepEqual(
    modules,
    importChecks()
      .filter((row) => row.doctor)
      .map((row) => row.module),
  );
  assert.ok(modules.includes("triton") && modules.includes("flash_attn"));
  assert.ok(!modules.includes("torchvision"), "torchvision's pairing is read from its torch== pin instead");
});

test("validate import-checks every row, the ones doctor leaves out included", () => {
  const options = JSON.parse(payloadArgs({})[0]!) as { extensions: string[] };
  assert.deepEqual(
    options.extensions,
    importChecks().map((row) => row.module),
  );
  assert.ok(options.extensions.includes("torchvision"));
});
