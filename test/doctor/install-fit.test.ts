/**
 * Fixes that fit the installer and the project (issue 22 item 8), on the real H100 capture with
 * its GPU changed to a V100 (torch 2.11 cu130 has no sm_70, so torch-arch-not-covered fires with
 * an install fix): the environment fix names the torch the project's pin accepts, as the project
 * fix does; a pixi environment gets pixi.toml lines and `pixi install`, never pip; an environment
 * without pip gets ensurepip first.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Facts } from "../../src/facts/schema.js";
import { readProject } from "../../src/gather/project.js";
import { diagnose } from "../../src/diagnose/diagnose.js";
import { loadKnowledgeBase } from "../../src/kb/index.js";
import { DERIVED } from "./captures.js";

const kb = loadKnowledgeBase();

/** The V100 variant of the real H100 capture (captures.ts), with one more change. */
function onV100(patch: (facts: Facts) => void = () => {}): Facts {
  const facts = DERIVED["h100-healthy-on-v100"]!();
  patch(facts);
  return facts;
}

function withRequirements(text: string) {
  return (facts: Facts) => {
    const dir = mkdtempSync(join(tmpdir(), "gpuprep-fit-"));
    writeFileSync(join(dir, "requirements.txt"), text);
    facts.project = readProject(dir);
  };
}

function archFix(facts: Facts): { summary: string; commands: string[] } {
  const finding = diagnose(facts, kb).find((f) => f.ruleId === "torch-arch-not-covered");
  assert.ok(
    finding?.fix,
    `torch-arch-not-covered fired: ${diagnose(facts, kb)
      .map((f) => f.ruleId)
      .join(", ")}`,
  );
  return finding.fix;
}

test("the environment fix keeps the project's torch pin (torch==2.7.1 -> torch 2.7), and says so", () => {
  const pinned = archFix(onV100(withRequirements("torch==2.7.1\n")));
  assert.match(
    pinned.summary,
    /Install torch 2\.7 cu\d+ .*\(it keeps torch==2\.7\.1 \(requirements\.txt:1\)\)/,
  );
  assert.match(pinned.commands[0] ?? "", /"torch==2\.7\.\*"/);
  // Silent case: no project, the best build for the GPU.
  const free = archFix(onV100());
  assert.doesNotMatch(free.summary, /it keeps/);
  assert.doesNotMatch(free.commands[0] ?? "", /torch==2\.7\./);
});

test("a pixi environment gets pixi.toml lines and pixi install; an environment without pip gets ensurepip first", () => {
  const pixi = archFix(
    onV100((f) => {
      f.python.interpreter.prefix = "/home/u/proj/.pixi/envs/default";
    }),
  );
  assert.match(
    pixi.commands[0] ?? "",
    /^# pixi\.toml, under \[pypi-dependencies\]: torch = \{ version = "==2\.\d+\.\*", index = "https:\/\/download\.pytorch\.org\/whl\/cu\d+" \}; then: pixi install$/,
  );
  assert.doesNotMatch(pixi.commands.join("\n"), /pip install/);
  const noPip = archFix(
    onV100((f) => {
      f.python.interpreter.kind = "venv";
      f.python.distributions = f.python.distributions
        .filter((d) => d.normalizedName !== "pip")
        .map((d) => ({ ...d, installer: "pip" }));
    }),
  );
  assert.match(noPip.commands[0] ?? "", /-m ensurepip --upgrade && .* -m pip install /);
  // Silent case: pip present, no ensurepip.
  const withPip = archFix(onV100());
  assert.doesNotMatch(withPip.commands[0] ?? "", /ensurepip/);
});
