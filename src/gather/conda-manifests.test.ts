import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { ProjectSchema } from "../facts/schema.js";
import { UserError } from "../errors.js";
import { hasProjectManifest, readProject } from "./project.js";
import { parseCondaSpec } from "./conda-spec.js";
import { buildVariant, condaVersionMatches } from "../util/conda-version.js";
import { tomlKeyLines } from "./toml-lines.js";

const FIXTURES = resolve("test/fixtures/projects");

function tempProject(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), "gpuprep-conda-"));
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
  return dir;
}

test("pixi.toml (seed 000): channels, platforms, system cuda, conda deps with their lines, features", () => {
  const project = readProject(join(FIXTURES, "pixi-gb10-conda-forge"));
  assert.ok(ProjectSchema.safeParse(project).success);
  const [pixi] = project.condaManifests ?? [];
  assert.ok(pixi);
  assert.equal(pixi.kind, "pixi");
  assert.equal(pixi.name, "virnucpro");
  assert.deepEqual(pixi.channels, ["conda-forge"]);
  assert.deepEqual(pixi.platforms, ["linux-64", "linux-aarch64"]);
  assert.deepEqual(pixi.systemCuda, { default: "12.0" });
  assert.deepEqual(pixi.environments, { dev: ["dev"] });
  assert.equal(pixi.lines["system-requirements.cuda"], 13);
  assert.equal(pixi.lines["channels"], 3);
  const torch = pixi.dependencies.find((d) => d.name === "pytorch");
  assert.deepEqual(
    {
      version: torch?.version,
      build: torch?.build,
      channel: torch?.channel,
      origin: torch?.origin,
      feature: torch?.feature,
    },
    { version: "==2.5.1", build: null, channel: null, origin: "pixi.toml:17", feature: "default" },
  );
  assert.equal(pixi.dependencies.find((d) => d.name === "pytest")?.feature, "dev");
  assert.equal(pixi.pypiDependencies[0]?.specifier, ">=0.8");
  assert.equal(pixi.pypiDependencies[0]?.origin, "pixi.toml:25");
});

test("pixi.toml (pixi's PyPI example): per-package index, inline system-requirements, environments tables, channel URLs", () => {
  const [pixi] = readProject(join(FIXTURES, "pixi-pypi-cu124")).condaManifests ?? [];
  assert.ok(pixi);
  assert.deepEqual(pixi.channels, ["conda-forge"], "https://prefix.dev/conda-forge names conda-forge");
  assert.deepEqual(pixi.systemCuda, { gpu: "12.0" });
  assert.deepEqual(pixi.environments, { gpu: ["gpu"], default: ["cpu"] });
  const torches = pixi.pypiDependencies.filter((d) => d.normalizedName === "torch");
  assert.deepEqual(
    torches.map((d) => [d.feature, d.specifier, d.index, d.origin]),
    [
      ["gpu", ">=2.5.1", "https://download.pytorch.org/whl/cu124", "pixi.toml:13"],
      ["cpu", ">=2.5.1", "https://download.pytorch.org/whl/cpu", "pixi.toml:17"],
    ],
  );
});

test("environment.yml: channels in order, channel::name specs, pytorch-cuda, the pip list with its lines", () => {
  const project = readProject(join(FIXTURES, "conda-pytorch-channel"));
  assert.ok(ProjectSchema.safeParse(project).success);
  const [env] = project.condaManifests ?? [];
  assert.ok(env);
  assert.equal(env.kind, "conda-environment");
  assert.equal(env.name, "amp-trainer");
  assert.deepEqual(env.channels, ["conda-forge", "pytorch", "nvidia", "defaults"]);
  assert.equal(env.lines["channels"], 3);
  const byName = new Map(env.dependencies.map((d) => [d.name, d]));
  assert.deepEqual(
    {
      channel: byName.get("pytorch")?.channel,
      version: byName.get("pytorch")?.version,
      origin: byName.get("pytorch")?.origin,
    },
    { channel: "pytorch", version: "", origin: "environment.yml:15" },
  );
  assert.equal(byName.get("pytorch-cuda")?.version, "12.1.*");
  assert.equal(byName.get("pytorch-cuda")?.origin, "environment.yml:17");
  assert.equal(byName.get("numpy")?.version, "<2");
  assert.deepEqual(
    env.pypiDependencies.map((d) => `${d.normalizedName}${d.specifier} ${d.origin}`),
    [
      "auraloss==0.3.0 environment.yml:21",
      "pytorch-lightning environment.yml:22",
      "transformers>=4 environment.yml:23",
    ],
    "-e .. is the project itself",
  );
});

test("a directory with only pixi.toml or environment.yml is a project; [tool.pixi] in pyproject.toml is read", () => {
  const pixiOnly = tempProject({
    "pixi.toml": '[workspace]\nchannels = ["conda-forge"]\nplatforms = ["linux-64"]\n',
  });
  assert.equal(hasProjectManifest(pixiOnly), true);
  assert.equal(hasProjectManifest(tempProject({ "environment.yml": "dependencies:\n  - numpy\n" })), true);
  const dir = tempProject({
    "pyproject.toml":
      '[project]\nname = "p"\nversion = "0.1"\ndependencies = ["numpy"]\n\n[tool.pixi.workspace]\nchannels = ["conda-forge"]\nplatforms = ["linux-aarch64"]\n\n[tool.pixi.dependencies]\npytorch-gpu = "*"\n',
  });
  const [pixi] = readProject(dir).condaManifests ?? [];
  assert.equal(pixi?.kind, "pixi");
  assert.equal(pixi?.path, join(dir, "pyproject.toml"));
  assert.deepEqual(
    pixi?.dependencies.map((d) => [d.name, d.version, d.origin]),
    [["pytorch-gpu", "", "pyproject.toml:11"]],
  );
  assert.deepEqual(readProject(tempProject({ "requirements.txt": "numpy\n" })).condaManifests, []);
});

test("bad pixi and conda manifests are one-line errors naming the file and line", () => {
  const toml = tempProject({ "pixi.toml": '[workspace]\nchannels = ["conda-forge"\n[dependencies]\n' });
  assert.throws(
    () => readProject(toml),
    (e: unknown) =>
      e instanceof UserError &&
      /pixi\.toml:\d+: invalid TOML/.test(e.message) &&
      /fix line/.test(e.hint ?? ""),
  );
  const yaml = tempProject({ "environment.yml": "name: x\ndependencies:\n  - numpy\n - broken: [\n" });
  assert.throws(
    () => readProject(yaml),
    (e: unknown) => e instanceof UserError && /environment\.yml:\d+: invalid YAML/.test(e.message),
  );
  const notList = tempProject({ "environment.yml": "name: x\ndependencies: numpy\n" });
  assert.throws(
    () => readProject(notList),
    (e: unknown) => e instanceof UserError && /dependencies must be a list/.test(e.message),
  );
  const badPypi = tempProject({
    "pixi.toml": '[workspace]\nchannels = []\n[pypi-dependencies]\ntorch = ">=2.5<<3"\n',
  });
  assert.throws(
    () => readProject(badPypi),
    (e: unknown) =>
      e instanceof UserError && /pixi\.toml:4: torch has an invalid PyPI requirement/.test(e.message),
  );
});

test("conda MatchSpecs: channel, fuzzy and exact versions, builds, bracket form", () => {
  const cases: [string, ReturnType<typeof parseCondaSpec>][] = [
    ["pytorch", { name: "pytorch", channel: null, version: "", build: null }],
    ["pytorch=2.5.1", { name: "pytorch", channel: null, version: "2.5.1.*", build: null }],
    ["pytorch==2.5.1", { name: "pytorch", channel: null, version: "==2.5.1", build: null }],
    [
      "conda-forge::pytorch=2.5=*cuda*",
      { name: "pytorch", channel: "conda-forge", version: "2.5.*", build: "*cuda*" },
    ],
    ["pytorch 2.5.1 cuda126*", { name: "pytorch", channel: null, version: "==2.5.1", build: "cuda126*" }],
    ["pytorch>=2.4,<3", { name: "pytorch", channel: null, version: ">=2.4,<3", build: null }],
    [
      "pytorch::pytorch-cuda=12.1=ha16c6d3_6",
      { name: "pytorch-cuda", channel: "pytorch", version: "12.1.*", build: "ha16c6d3_6" },
    ],
    [
      "pytorch[version='>=2.4',build='*cuda*']",
      { name: "pytorch", channel: null, version: ">=2.4", build: "*cuda*" },
    ],
    [
      "nvidia/label/cuda-12.1.0::cuda-nvcc",
      { name: "cuda-nvcc", channel: "nvidia/label/cuda-12.1.0", version: "", build: null },
    ],
  ];
  for (const [raw, expected] of cases) assert.deepEqual(parseCondaSpec(raw), expected, raw);
  assert.equal(parseCondaSpec("::"), null);
});

test("conda version specs match like conda: exact, prefix, ranges, alternatives", () => {
  const yes: [string, string][] = [
    ["2.5.1", "==2.5.1"],
    ["2.5.1", "2.5.*"],
    ["2.5.0", "==2.5"],
    ["2.13.0", ">=2.8.0,<3"],
    ["2.6.0", "2.5.*|2.6.*"],
    ["12.6", "12.*"],
  ];
  const no: [string, string][] = [
    ["2.5.1", "==2.5"],
    ["2.10.0", "2.1.*"],
    ["3.0.0", ">=2.8.0,<3"],
    ["2.7.1", "!=2.7.1"],
  ];
  for (const [version, spec] of yes)
    assert.equal(condaVersionMatches(version, spec), true, `${version} ${spec}`);
  for (const [version, spec] of no)
    assert.equal(condaVersionMatches(version, spec), false, `${version} ${spec}`);
  assert.deepEqual(buildVariant("cuda126*"), { kind: "cuda", cuda: "12.6" });
  assert.deepEqual(buildVariant("*cuda12.4*"), { kind: "cuda", cuda: "12.4" });
  assert.deepEqual(buildVariant("cuda12*"), { kind: "cuda", cuda: "12" });
  assert.deepEqual(buildVariant("cpu_*"), { kind: "cpu" });
  assert.equal(buildVariant("py311*"), null);
});

test("TOML key lines: tables, array-of-tables indices, items across lines, # inside strings", () => {
  const lines = tomlKeyLines(
    [
      "[project]",
      "dependencies = [",
      '  "torch==2.5.1",  # pinned',
      '  "peft @ git+https://x/peft.git#egg=peft",',
      "]",
      "[[tool.uv.index]]",
      'url = "https://a"',
      "[[tool.uv.index]]",
      'url = "https://b"',
      'notes = """',
      "x = 1",
      '"""',
      "[tool.uv.sources]",
      'torch = { index = "b" }',
    ].join("\n"),
  );
  assert.equal(lines["project.dependencies[]=torch==2.5.1"], 3);
  assert.equal(lines["project.dependencies[]=peft @ git+https://x/peft.git#egg=peft"], 4);
  assert.equal(lines["tool.uv.index[0].url"], 7);
  assert.equal(lines["tool.uv.index[1].url"], 9);
  assert.equal(lines["tool.uv.index[1].x"], undefined, "inside a multi-line string");
  assert.equal(lines["tool.uv.sources.torch"], 14);
});
