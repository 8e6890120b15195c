/**
 * `gpuprep init` in a conda project (issue 22 item 6): an environment.yml alone keeps its conda
 * environment natively. environment.yml is edited line by line (torch from the PyTorch index under
 * pip:, the conda torch lines commented out, changed pins in place) and scripts/setup-conda.sh runs
 * `env update --prune` with mamba where installed, conda else; the scripts run here against
 * stand-in conda/mamba that log their arguments. A project with a pyproject.toml beside its
 * environment.yml stays a uv venv.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { cpSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parse } from "yaml";
import { needs, SHELLCHECK } from "../support/needs.js";
import { listFiles, repoRoot, runInit, unwrapped } from "./helpers.js";
import { makeStandIns, runScript } from "./standins.js";

interface EnvironmentFile {
  name?: string;
  dependencies: (string | { pip: string[] })[];
}

function pipList(file: EnvironmentFile): string[] {
  const pip = file.dependencies.find((d): d is { pip: string[] } => typeof d === "object");
  return pip?.pip ?? [];
}

function condaProject(text: string | null, fixture?: string): string {
  const dir = join(mkdtempSync(join(tmpdir(), "gpuprep-init-conda-")), "amp");
  if (fixture) cpSync(join(repoRoot, "test/fixtures/projects", fixture), dir, { recursive: true });
  else {
    mkdirSync(dir);
    writeFileSync(join(dir, "environment.yml"), text!);
  }
  return dir;
}

test("an environment.yml project on an RTX 5070 Ti: environment.yml edited to torch from the cu13x index under pip:, every other line kept, setup-conda.sh runs conda env update --prune", (t) => {
  if (needs(t, SHELLCHECK)) return;
  // The fixture: sdatkinson/neural-amp-modeler's environment_gpu.yml, trimmed (test/fixtures/projects/README.md).
  const dir = condaProject(null, "conda-pytorch-channel");
  const before = readFileSync(join(dir, "environment.yml"), "utf8");
  const result = runInit([
    "--project",
    dir,
    "--target",
    "rtx-5070-ti",
    "--driver",
    "580",
    "--strategy",
    "native",
  ]);
  assert.equal(result.code, 0, result.stderr);
  const text = readFileSync(join(dir, "environment.yml"), "utf8");
  const after = parse(text) as EnvironmentFile;
  const pip = pipList(after);
  const index = pip.find((e) => e.startsWith("--extra-index-url "));
  assert.match(String(index), /^--extra-index-url https:\/\/download\.pytorch\.org\/whl\/cu13\d$/);
  const torch = pip.find((e) => /^torch==/.test(e));
  assert.match(String(torch), /^torch==2\.\d+\.\*$/);
  assert.ok(pip.includes("auraloss==0.3.0") && pip.includes("-e .."), "the user's pip entries stay");
  const conda = after.dependencies.filter((d): d is string => typeof d === "string");
  assert.ok(!conda.some((d) => /pytorch/.test(d)), `conda torch lines commented out: ${conda.join(", ")}`);
  // A text edit: each original line is still there, as it was or commented out with the reason.
  const lines = text.split("\n");
  for (const line of before.trimEnd().split("\n"))
    assert.ok(
      lines.includes(line) ||
        lines.some((l) =>
          l.startsWith(`${line.match(/^\s*/)![0]}# ${line.trimStart()}  # gpuprep init: torch`),
        ),
      `line kept in place: ${line}`,
    );
  assert.ok(
    lines.indexOf("name: amp-trainer") === 1 && lines[0]!.startsWith("# GPU environment"),
    "order kept",
  );
  // Each change is said as a diff line with its reason.
  const said = unwrapped(result.stdout);
  assert.match(
    said,
    /environment\.yml:15: - pytorch::pytorch {2}-> {2}\(commented out: torch 2\.\d+ cu13\d from the PyTorch index runs natively on NVIDIA GeForce RTX 5070 Ti/,
  );
  assert.match(said, /environment\.yml: \+ torch==2\.\d+\.\* \(pip: list/);
  assert.match(said, /next: scripts\/setup-conda\.sh/);
  assert.match(
    said,
    /environment\.yml: pytorch -> torch \(conda name -> PyPI name\); natively the plan edits that file and installs with conda/,
  );
  const files = listFiles(dir);
  assert.ok(files.includes("scripts/setup-conda.sh"));
  assert.ok(!files.includes("scripts/setup-native.sh"), "no uv venv beside the conda environment");
  const script = join(dir, "scripts/setup-conda.sh");
  const lint = spawnSync("shellcheck", [script], { encoding: "utf8" });
  assert.equal(lint.status, 0, lint.stdout);
  // conda alone: it is used, for the file's own environment.
  const condaOnly = makeStandIns(["conda", "nvidia-smi"]);
  const ran = runScript(script, condaOnly);
  assert.equal(ran.code, 0, ran.stderr);
  assert.match(ran.stdout, /using conda \(/);
  const calls = condaOnly.calls().filter((c) => c.tool === "conda");
  assert.deepEqual(calls[0]?.argv, ["env", "update", "--file", "environment.yml", "--prune"]);
  assert.equal(calls[0]?.cwd, dir);
  assert.deepEqual(calls[1]?.argv.slice(0, 4), ["run", "--name", "amp-trainer", "python"]);
  // mamba where it is installed; conda is not asked then.
  const both = makeStandIns(["mamba", "conda", "nvidia-smi"]);
  const fast = runScript(script, both);
  assert.equal(fast.code, 0, fast.stderr);
  assert.match(fast.stdout, /using mamba \(/);
  assert.deepEqual(
    both.calls().map((c) => [c.tool, ...c.argv.slice(0, 2)]),
    [
      ["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
      ["mamba", "env", "update"],
      ["mamba", "run", "--name"],
    ],
  );
  // Neither: a clear error.
  const none = runScript(script, makeStandIns(["nvidia-smi"]));
  assert.equal(none.code, 1);
  assert.match(none.stderr, /error: neither mamba nor conda is installed/);
});

/** Seed 000's pins (conda-forge pytorch 2.5.1, python 3.9) written as an environment.yml, by hand for this test. */
const GB10_ENVIRONMENT = `# seed 000's dependencies as a conda environment file (written for this test)
name: virnucpro
channels:
  - conda-forge
dependencies:
  - python=3.9  # the lab's cluster default
  - biopython>=1.84
  - pytorch=2.5.1
  - pandas
`;

test("an environment.yml project on a GB10 (sm_121, aarch64): the 2.5.1 pin no build runs becomes the aarch64 cu13x torch under a new pip: list, python changed in place, both said as diffs", () => {
  const dir = condaProject(GB10_ENVIRONMENT);
  const result = runInit([
    "--project",
    dir,
    "--target",
    "dgx-spark",
    "--driver",
    "580.95.05",
    "--strategy",
    "native",
  ]);
  assert.equal(result.code, 0, result.stderr);
  const text = readFileSync(join(dir, "environment.yml"), "utf8");
  const after = parse(text) as EnvironmentFile;
  const conda = after.dependencies.filter((d): d is string => typeof d === "string");
  assert.deepEqual(conda, ["python=3.10.*", "biopython>=1.84", "pandas", "pip"]);
  assert.match(
    text,
    /^ {2}- python=3\.10\.\* {2}# the lab's cluster default {2}# changed by gpuprep init \(was python=3\.9\)$/m,
  );
  assert.match(
    text,
    /^ {2}# - pytorch=2\.5\.1 {2}# gpuprep init: torch 2\.9 cu13\d from the PyTorch index runs natively on NVIDIA GB10/m,
  );
  const pip = pipList(after);
  assert.match(String(pip[0]), /^--extra-index-url https:\/\/download\.pytorch\.org\/whl\/cu13\d$/);
  assert.equal(pip[1], "torch==2.9.*");
  const said = unwrapped(result.stdout);
  assert.match(
    said,
    /environment\.yml:8: pytorch=2\.5\.1 {2}-> {2}pytorch=2\.9\.\*/,
    "the pin change, as a diff",
  );
  assert.match(said, /environment\.yml:6: python=3\.9 {2}-> {2}python=3\.10/);
  assert.ok(listFiles(dir).includes("scripts/setup-conda.sh"));
});

test("silent: an environment.yml whose pip: list already takes a torch that runs from the planned index is left as it is", () => {
  // First plan the GB10 file above; its result already asks for the torch that runs.
  const dir = condaProject(GB10_ENVIRONMENT);
  const args = ["--project", dir, "--target", "dgx-spark", "--driver", "580.95.05", "--strategy", "native"];
  assert.equal(runInit(args).code, 0);
  const planned = readFileSync(join(dir, "environment.yml"), "utf8");
  const again = condaProject(planned);
  const result = runInit(["--project", again, ...args.slice(2)]);
  assert.equal(result.code, 0, result.stderr);
  assert.equal(readFileSync(join(again, "environment.yml"), "utf8"), planned, "no edit");
  assert.doesNotMatch(result.stdout, /environment\.yml: your file/);
  assert.ok(listFiles(again).includes("scripts/setup-conda.sh"));
});

test("an environment.yml beside a pyproject.toml stays a uv venv, the environment file untouched", () => {
  const dir = condaProject(GB10_ENVIRONMENT);
  writeFileSync(
    join(dir, "pyproject.toml"),
    '[project]\nname = "virnucpro"\nversion = "0.1.0"\nrequires-python = ">=3.10"\ndependencies = ["pandas"]\n',
  );
  const result = runInit([
    "--project",
    dir,
    "--target",
    "dgx-spark",
    "--driver",
    "580.95.05",
    "--strategy",
    "native",
  ]);
  assert.equal(result.code, 0, result.stderr);
  const files = listFiles(dir);
  assert.ok(files.includes("scripts/setup-native.sh"));
  assert.ok(!files.includes("scripts/setup-conda.sh"));
  assert.equal(readFileSync(join(dir, "environment.yml"), "utf8"), GB10_ENVIRONMENT);
});

test("a pip: list on another PyTorch index (cu121, torch==2.5.1+cu121) in environment.yaml: the index line repointed, the torch line commented out, the planned torch after it; flow style is refused with a hint", () => {
  // Written for this test: the pip-from-the-cu121-index form of PyTorch's own install instructions.
  const dir = join(mkdtempSync(join(tmpdir(), "gpuprep-init-conda-")), "p");
  mkdirSync(dir);
  writeFileSync(
    join(dir, "environment.yaml"),
    "name: p\nchannels:\n  - conda-forge\ndependencies:\n  - python=3.11\n  - pip\n  - pip:\n    - --index-url https://download.pytorch.org/whl/cu121\n    - torch==2.5.1+cu121\n    - einops\n",
  );
  const args = ["--target", "rtx-5070-ti", "--driver", "580", "--strategy", "native"];
  const result = runInit(["--project", dir, ...args]);
  assert.equal(result.code, 0, result.stderr);
  const text = readFileSync(join(dir, "environment.yaml"), "utf8");
  const pip = pipList(parse(text) as EnvironmentFile);
  assert.match(String(pip[0]), /^--index-url https:\/\/download\.pytorch\.org\/whl\/cu1[23]\d$/);
  assert.notEqual(pip[0], "--index-url https://download.pytorch.org/whl/cu121", "cu121 has no sm_120 code");
  assert.match(String(pip[1]), /^torch==2\.\d+\.\*$/);
  assert.deepEqual(pip.slice(2), ["einops"]);
  assert.match(text, /^ {4}# - torch==2\.5\.1\+cu121 {2}# gpuprep init: /m);
  assert.ok(listFiles(dir).includes("scripts/setup-conda.sh"));
  assert.match(
    readFileSync(join(dir, "scripts/setup-conda.sh"), "utf8"),
    /env update --file environment\.yaml --prune/,
  );
  const flow = join(mkdtempSync(join(tmpdir(), "gpuprep-init-conda-")), "f");
  mkdirSync(flow);
  writeFileSync(join(flow, "environment.yml"), "name: f\ndependencies: [python=3.11, pytorch]\n");
  const refused = runInit(["--project", flow, ...args]);
  assert.equal(refused.code, 2, refused.stdout);
  assert.match(refused.stderr, /environment\.yml: no block-style dependencies: list to edit/);
  assert.match(refused.stderr, /hint: write dependencies: in environment\.yml with one "- package" per line/);
});
