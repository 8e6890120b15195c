/**
 * `gpuprep doctor` for real on this machine (no --from): the probe runs in a venv without torch
 * and in Debian's python3 with python3-torch (a real CPU-only build), as on CI.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseFacts } from "../../src/facts/io.js";
import { needs, PYTHON3_TORCH } from "../support/needs.js";

const CLI = fileURLToPath(new URL("../../src/cli/main.js", import.meta.url));
const DEBIAN_PYTHON = "/usr/bin/python3";

function doctorJson(python: string, cwd: string, extra: string[] = []) {
  const result = spawnSync(process.execPath, [CLI, "doctor", "--python", python, "--json", ...extra], {
    cwd,
    encoding: "utf8",
  });
  assert.equal(result.stderr, "", "no error output");
  const report = JSON.parse(result.stdout) as { findings: { ruleId: string; severity: string }[] };
  return { code: result.status, ids: report.findings.map((f) => `${f.ruleId}:${f.severity}`) };
}

test("a venv without torch: torch-not-installed, exit 0", () => {
  const dir = mkdtempSync(join(tmpdir(), "gpuprep-live-"));
  const made = spawnSync(DEBIAN_PYTHON, ["-m", "venv", "--without-pip", join(dir, "venv")], {
    encoding: "utf8",
  });
  assert.equal(made.status, 0, made.stderr);
  const { code, ids } = doctorJson(join(dir, "venv", "bin", "python"), dir);
  assert.equal(code, 0);
  assert.ok(ids.includes("torch-not-installed:info"), ids.join(", "));
  assert.ok(!ids.some((id) => id.startsWith("cpu-only-torch")));
});

test("Debian's python3-torch: a CPU-only torch, judged by GPU presence; --save writes a valid snapshot", (t) => {
  if (needs(t, PYTHON3_TORCH)) return;
  const dir = mkdtempSync(join(tmpdir(), "gpuprep-live-"));
  const saved = join(dir, "facts.json");
  const { code, ids } = doctorJson(DEBIAN_PYTHON, dir, ["--save", saved]);
  const facts = parseFacts(readFileSync(saved, "utf8"), saved);
  const hasGpu = facts.host.nvidia.gpus.length > 0;
  assert.ok(ids.includes(`cpu-only-torch:${hasGpu ? "error" : "info"}`), ids.join(", "));
  assert.equal(code, hasGpu ? 1 : 0);
  assert.equal(facts.python.torch?.cudaVersion, null);
});

test("--import-check: a module of the user's that does not import is a finding; a bad name exits 2", () => {
  const dir = mkdtempSync(join(tmpdir(), "gpuprep-live-"));
  const { code, ids } = doctorJson(DEBIAN_PYTHON, dir, ["--import-check", "gpuprep_no_such_module"]);
  assert.equal(code, 1);
  assert.ok(ids.includes("extension-import-failed:error"), ids.join(", "));
  const bad = spawnSync(process.execPath, [CLI, "doctor", "--import-check", "not a module"], {
    encoding: "utf8",
  });
  assert.equal(bad.status, 2);
  assert.match(bad.stderr, /is not a Python module name\n {2}hint: /);
});
