/**
 * Remembered settings (issue 29 item 1), run as a user runs them: the target put once under
 * [tool.gpuprep] in pyproject.toml (or in gpuprep.toml beside pixi.toml) is what `init`, `memory`
 * and `doctor --target` plan for without a flag; a flag wins; -v says where each value came from;
 * a bad value is one line naming the file and the key, exit 2.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { parse as parseToml } from "smol-toml";
import { runCli } from "../support/cli.js";

const GPT2_TINY = fileURLToPath(new URL("../../../test/memory/fixtures/gpt2-tiny.json", import.meta.url));
const work = mkdtempSync(join(tmpdir(), "gpuprep-settings-"));
let projects = 0;

const PROJECT = `[project]
name = "demo"
version = "0.1"
requires-python = ">=3.10"
dependencies = ["torch>=2.4"]
`;

/** A project directory holding `files`, and the memory fixture's config. */
function project(files: Record<string, string>): string {
  const dir = join(work, `p${projects++}`);
  mkdirSync(dir);
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
  copyFileSync(GPT2_TINY, join(dir, "config.json"));
  return dir;
}

const SPARK = `${PROJECT}\n[tool.gpuprep]\ntarget = "dgx-spark"\ndriver = 580\n`;

/** The value at a dotted path of a parsed document ("plan.target.gpuName", "gpus.0.name"). */
function field(doc: unknown, path: string): unknown {
  return path
    .split(".")
    .reduce<unknown>((at, key) => (at as Record<string, unknown> | undefined)?.[key], doc);
}

function json(args: string[], cwd: string): unknown {
  const run = runCli(args, { cwd });
  assert.ok(run.code === 0 || run.code === 1, `gpuprep ${args.join(" ")} exited ${run.code}:\n${run.stderr}`);
  return JSON.parse(run.stdout) as unknown;
}

test("init, memory and doctor --target take the target from pyproject.toml's [tool.gpuprep], without flags", () => {
  const dir = project({ "pyproject.toml": SPARK });
  const init = json(["init", "--dry-run", "--json"], dir);
  assert.equal(field(init, "plan.target.gpuName"), "NVIDIA GB10");
  assert.equal(field(init, "plan.target.driverVersion"), "580");
  assert.match(
    field(init, "plan.target.origin") as string,
    /pyproject\.toml \[tool\.gpuprep\]'s target dgx-spark/,
  );

  const memory = json(["memory", "--model", "config.json", "--tier", "formula", "--json"], dir);
  assert.equal(field(memory, "device.name"), "NVIDIA GB10");

  const doctor = json(["doctor", "--target", "--json"], dir);
  assert.equal(field(doctor, "facts.host.nvidia.gpus.0.name"), "NVIDIA GB10");
  assert.equal(field(doctor, "facts.host.nvidia.driverVersion"), "580");
});

test("without settings the same commands have no target: init and doctor --target say so", () => {
  const dir = project({ "pyproject.toml": PROJECT });
  const doctor = runCli(["doctor", "--target"], { cwd: dir });
  assert.equal(doctor.code, 2);
  assert.match(
    doctor.stderr,
    /--target without a value takes the project's target setting, and the project has no settings/,
  );
  const memory = runCli(["memory", "--model", "config.json", "--tier", "formula", "--json"], { cwd: dir });
  assert.notEqual(field(JSON.parse(memory.stdout || "{}"), "device.name"), "NVIDIA GB10");
});

test("a flag wins over the setting, and -v says where each value came from", () => {
  const dir = project({ "pyproject.toml": SPARK });
  const run = runCli(["init", "--dry-run", "--json", "-v", "--target", "h100"], { cwd: dir });
  assert.equal(run.code, 0, run.stderr);
  assert.match(field(JSON.parse(run.stdout), "plan.target.gpuName") as string, /H100/);
  assert.match(
    run.stderr,
    /--target h100: from the command line, over target = dgx-spark in pyproject\.toml \[tool\.gpuprep\]/,
  );
  assert.match(run.stderr, /--driver 580: from driver in pyproject\.toml \[tool\.gpuprep\]/);

  const taken = runCli(["init", "--dry-run", "-v"], { cwd: dir });
  assert.equal(taken.code, 0, taken.stderr);
  assert.match(taken.stderr, /--target dgx-spark: from target in pyproject\.toml \[tool\.gpuprep\]/);
  const memory = runCli(["memory", "--model", "config.json", "--tier", "formula", "-v"], { cwd: dir });
  assert.match(memory.stderr, /--target dgx-spark: from target in pyproject\.toml \[tool\.gpuprep\]/);
});

test("gpuprep.toml beside pixi.toml holds the settings, and wins over pyproject.toml's table", () => {
  const pixi = `[workspace]\nname = "demo"\nchannels = ["conda-forge"]\nplatforms = ["linux-64"]\n\n[dependencies]\npython = "3.12.*"\n`;
  const dir = project({ "pixi.toml": pixi, "gpuprep.toml": 'target = "h100"\ndriver = "580.95.05"\n' });
  const init = json(["init", "--dry-run", "--json"], dir);
  assert.match(field(init, "plan.target.gpuName") as string, /H100/);
  assert.equal(field(init, "plan.target.driverVersion"), "580.95.05");

  const both = project({ "pyproject.toml": SPARK, "gpuprep.toml": 'target = "h100"\n' });
  const run = runCli(["init", "--dry-run", "--json", "-v"], { cwd: both });
  assert.match(field(JSON.parse(run.stdout), "plan.target.gpuName") as string, /H100/);
  assert.match(run.stderr, /pyproject\.toml's \[tool\.gpuprep\] is not read: gpuprep\.toml is there/);
});

test("a bad setting is one line naming the file and the key, with a hint, exit 2", () => {
  const cases: [file: string, text: string, message: RegExp][] = [
    [
      "pyproject.toml",
      `${PROJECT}\n[tool.gpuprep]\ndriver = "abc"\n`,
      /pyproject\.toml \[tool\.gpuprep\]: driver = "abc" is not valid/,
    ],
    [
      "pyproject.toml",
      `${PROJECT}\n[tool.gpuprep]\nstrategy = "docker"\n`,
      /strategy = "docker" is not valid: one of container, native, auto/,
    ],
    [
      "pyproject.toml",
      `${PROJECT}\n[tool.gpuprep]\ntagret = "h100"\n`,
      /pyproject\.toml \[tool\.gpuprep\]: unknown setting "tagret"/,
    ],
    [
      "gpuprep.toml",
      `build-from-source = "flash-attn"\n`,
      /gpuprep\.toml: build-from-source = "flash-attn" is not valid/,
    ],
    ["gpuprep.toml", `target = [\n`, /gpuprep\.toml:\d+: invalid TOML/],
    [
      "pyproject.toml",
      `${PROJECT}\n[tool.gpuprep]\ntarget = "notagpu"\n`,
      /pyproject\.toml \[tool\.gpuprep\]'s target "notagpu" is not a GPU/,
    ],
  ];
  for (const [file, text, message] of cases) {
    const dir = project(
      file === "pyproject.toml" ? { [file]: text } : { "pyproject.toml": PROJECT, [file]: text },
    );
    const run = runCli(["init", "--dry-run"], { cwd: dir });
    assert.equal(run.code, 2, `${text}\n${run.stderr}`);
    const lines = run.stderr.trimEnd().split("\n");
    assert.equal(lines.length, 2, run.stderr);
    assert.match(lines[0]!, message);
    assert.match(lines[1]!, /^ {2}hint: \S/);
    assert.doesNotMatch(run.stderr, /\n\s+at /);
  }
});

test("the shipped schemas/gpuprep.settings.v1.schema.json accepts docs/settings.md's examples and refuses what gpuprep refuses", () => {
  const require = createRequire(import.meta.url);
  const Ajv2020 = require("ajv/dist/2020").default as typeof import("ajv").default;
  const repo = fileURLToPath(new URL("../../../", import.meta.url));
  const schema = JSON.parse(
    readFileSync(join(repo, "schemas", "gpuprep.settings.v1.schema.json"), "utf8"),
  ) as object;
  const validate = new Ajv2020({ allErrors: true }).compile(schema);
  const examples = [
    ...readFileSync(join(repo, "docs", "settings.md"), "utf8").matchAll(/```toml\n([\s\S]*?)```/g),
  ];
  assert.equal(examples.length, 2);
  for (const [, text] of examples) {
    const doc = parseToml(text!) as Record<string, unknown>;
    const table = (doc["tool"] as Record<string, unknown> | undefined)?.["gpuprep"] ?? doc;
    assert.ok(validate(JSON.parse(JSON.stringify(table))), JSON.stringify(validate.errors));
  }
  for (const bad of [
    { strategy: "docker" },
    { tagret: "h100" },
    { driver: "abc" },
    { "build-from-source": "x" },
  ])
    assert.equal(validate(bad), false, JSON.stringify(bad));
});
