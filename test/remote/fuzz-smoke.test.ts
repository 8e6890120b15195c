/**
 * A short run of bench/fuzz-remote.mjs in the suite (the 1M-input runs are in docs/benchmarks.md):
 * 500 mutated inputs for each reader issue 25 added, no crash and no input over 1 s.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";

const script = fileURLToPath(new URL("../../../bench/fuzz-remote.mjs", import.meta.url));

test("fuzz: zip directory, tar, OCI JSON, PEP 691 JSON, PEP 503 HTML, lock-file and variant.json readers, and the streamed ELF scan, survive 500 mutated inputs each", () => {
  const result = spawnSync(process.execPath, [script, "500", "7"], { encoding: "utf8", timeout: 300_000 });
  assert.equal(result.status, 0, `${result.stdout}\n${result.stderr.slice(-2000)}`);
  for (const target of ["zip", "tar", "oci", "pep691", "html", "lock", "stream", "variant"])
    assert.match(result.stdout, new RegExp(`^${target}: 500 inputs in `, "m"));
});
