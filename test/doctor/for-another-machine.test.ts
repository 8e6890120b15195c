/**
 * A project judged for a machine doctor is not on (issue 22 item 9): `doctor --target NAME
 * [--driver V]` (the machine from the knowledge base, only the project rules) and `doctor --from
 * SNAPSHOT --project DIR` (another project on a saved machine).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { runCli } from "../support/cli.js";

const H100 = fileURLToPath(new URL("../../../test/fixtures/facts/h100-healthy.json", import.meta.url));

function project(requirements: string): string {
  const dir = mkdtempSync(join(tmpdir(), "gpuprep-other-machine-"));
  writeFileSync(join(dir, "requirements.txt"), requirements);
  return dir;
}

interface Report {
  findings: { ruleId: string; severity: string }[];
}

test("doctor --target: the project's torch judged for a DGX Spark, with init's nearest-series fix; a pin that runs is silent", () => {
  const result = runCli([
    "doctor",
    "--target",
    "dgx-spark",
    "--project",
    project("torch==2.5.1\n"),
    "--json",
  ]);
  assert.equal(result.code, 1, result.stderr);
  const report = JSON.parse(result.stdout) as Report;
  assert.deepEqual(
    report.findings.map((f) => `${f.ruleId}:${f.severity}`),
    ["project-torch-cpu-only:error"],
    "only project rules run: nothing about an environment that was not gathered",
  );
  const text = runCli(["doctor", "--target", "dgx-spark", "--project", project("torch==2.5.1\n")]);
  assert.match(text.stdout, /^gpuprep doctor — --target dgx-spark/);
  assert.match(
    text.stdout,
    /requirements\.txt:1: torch==2\.5\.1 {2}-> {2}torch==2\.9\.\*/,
    "the change init makes",
  );
  // Silent: a project routed to a build with sm_120 code.
  const fine = runCli([
    "doctor",
    "--target",
    "dgx-spark",
    "--project",
    project("--index-url https://download.pytorch.org/whl/cu130\ntorch==2.9.*\n"),
    "--json",
  ]);
  assert.equal(fine.code, 0, fine.stdout);
  assert.deepEqual((JSON.parse(fine.stdout) as Report).findings, []);
});

test("doctor --target refuses gathering flags and a missing project in one line; --driver needs --target", () => {
  const noProject = runCli(["doctor", "--target", "dgx-spark"], {
    cwd: mkdtempSync(join(tmpdir(), "gpuprep-empty-")),
  });
  assert.equal(noProject.code, 2);
  assert.match(noProject.stderr, /doctor --target judges a project's manifests/);
  const fast = runCli(["doctor", "--target", "h100", "--fast"]);
  assert.equal(fast.code, 2);
  assert.match(fast.stderr, /--target judges a project for a named machine/);
  const driver = runCli(["doctor", "--driver", "580"]);
  assert.equal(driver.code, 2);
  assert.match(driver.stderr, /--driver and --arch describe a --target machine/);
});

test("doctor --from SNAPSHOT --project DIR judges that project on the snapshot's machine", () => {
  const pinned = runCli(["doctor", "--from", H100, "--project", project("torch==2.5.1\n"), "--json"]);
  const ids = (JSON.parse(pinned.stdout) as Report).findings.map((f) => f.ruleId);
  assert.ok(ids.includes("project-torch-pin-mismatch"), ids.join(", "));
  const none = runCli(["doctor", "--from", H100, "--json"]);
  assert.ok(
    !(JSON.parse(none.stdout) as Report).findings.some((f) => f.ruleId === "project-torch-pin-mismatch"),
  );
});
