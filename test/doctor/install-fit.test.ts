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
import { repoRoot, runInit } from "../init/helpers.js";

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

/** torch as conda installs it into a conda environment (`conda list` names it pytorch; pip's INSTALLER says conda). */
function inConda(project: string | null, torchBy: "conda" | "pip") {
  return (facts: Facts) => {
    facts.python.interpreter.kind = "conda";
    facts.python.interpreter.prefix = "/home/u/miniforge3/envs/amp-trainer";
    for (const d of facts.python.distributions) d.installer = torchBy;
    if (project) facts.project = readProject(project);
  };
}

test("a conda environment with its environment.yml: the fix edits the file's lines and runs env update --prune with mamba or conda, for the torch init plans", () => {
  // The fixture neural-amp-modeler's environment.yml (pytorch::pytorch, pytorch-cuda=12.1), see its README.
  const project = join(repoRoot, "test/fixtures/projects/conda-pytorch-channel");
  const fix = archFix(onV100(inConda(project, "conda")));
  const init = runInit([
    "--project",
    project,
    "--target",
    "v100",
    "--driver",
    "580.159.04",
    "--strategy",
    "native",
    "--dry-run",
    "--json",
  ]);
  assert.equal(init.code, 0, init.stderr);
  const build = (
    JSON.parse(init.stdout) as { plan: { native: { build: { torch: string; indexUrl: string } } } }
  ).plan.native.build;
  assert.match(
    fix.summary,
    new RegExp(`^Install torch ${build.torch.replace(".", "\\.")} `),
    "the torch init plans",
  );
  assert.deepEqual(fix.commands.slice(0, 4), [
    "# environment.yml:15: pytorch::pytorch  ->  (comment it out: torch comes from the pip: list)",
    "# environment.yml:17: pytorch::pytorch-cuda=12.1  ->  (comment it out: torch comes from the pip: list)",
    `# environment.yml, under pip:: --extra-index-url ${build.indexUrl} and torch==${build.torch}.*`,
    '"$(command -v mamba || command -v conda)" env update --file environment.yml --prune',
  ]);
  assert.doesNotMatch(fix.commands.join("\n"), /pip install/);
  // Without an environment file, conda's torch is removed before pip installs the one that runs.
  const bare = archFix(onV100(inConda(null, "conda")));
  assert.match(
    bare.commands[0] ?? "",
    /^"\$\(command -v mamba \|\| command -v conda\)" remove --force -y -p \/home\/u\/miniforge3\/envs\/amp-trainer pytorch /,
  );
  assert.match(bare.commands[1] ?? "", /-m pip install --force-reinstall "torch==2\.\d+\.\*" --index-url /);
  // Silent case: pip installed torch into the conda environment, so pip's command fits.
  const byPip = archFix(onV100(inConda(null, "pip")));
  assert.match(byPip.commands[0] ?? "", /-m pip install --force-reinstall "torch==/);
  assert.doesNotMatch(byPip.commands.join("\n"), /mamba|conda/);
});
