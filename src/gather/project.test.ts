import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { ProjectSchema } from "../facts/schema.js";
import { UserError } from "../errors.js";
import { hasProjectManifest, readProject } from "./project.js";
import { parseRequirement } from "./requirement.js";

const FIXTURES = resolve("test/fixtures/projects");

test("torch-pinned: PEP 621, dependency groups, [tool.uv], requirements with -r/-c and index URLs", () => {
  const project = readProject(join(FIXTURES, "torch-pinned"));
  assert.ok(ProjectSchema.safeParse(project).success);
  const py = project.pyproject;
  assert.ok(py);
  assert.equal(py.name, "vision-trainer");
  assert.equal(py.requiresPython, ">=3.10,<3.13");
  const torch = py.dependencies.find((r) => r.normalizedName === "torch");
  assert.equal(torch?.specifier, "==2.5.1");
  assert.equal(torch?.origin, "pyproject.toml:project.dependencies");
  const transformers = py.dependencies.find((r) => r.name === "transformers");
  assert.deepEqual(transformers?.extras, ["torch"]);
  const flash = py.dependencies.find((r) => r.normalizedName === "flash-attn");
  assert.equal(flash?.marker, "platform_machine == 'x86_64' and sys_platform == 'linux'");
  assert.equal(py.optionalDependencies["serve"]?.[0]?.specifier, "==0.6.4.post1");
  assert.deepEqual(
    py.dependencyGroups["dev"]?.map((r) => r.name),
    ["pytest"],
  );
  assert.deepEqual(py.uv.indexes, [
    { name: "pytorch-cu124", url: "https://download.pytorch.org/whl/cu124", explicit: true },
  ]);
  assert.deepEqual(py.uv.sources["torch"], { index: "pytorch-cu124" });
  assert.equal(py.uv.constraintDependencies[0]?.specifier, "<10");
  assert.equal(py.uv.overrideDependencies[0]?.normalizedName, "numpy");

  const files = project.requirementsFiles.map((f) => f.path.slice(FIXTURES.length + "/torch-pinned/".length));
  assert.deepEqual(files, ["requirements.txt", "requirements/base.txt", "requirements/constraints.txt"]);
  const main = project.requirementsFiles[0]!;
  assert.deepEqual(main.extraIndexUrls, ["https://download.pytorch.org/whl/cu124"]);
  assert.deepEqual(main.constraintFiles, [join(FIXTURES, "torch-pinned/requirements/constraints.txt")]);
  const byName = new Map(main.requirements.map((r) => [r.normalizedName, r]));
  assert.equal(byName.get("torch")?.specifier, "==2.5.1");
  assert.equal(byName.get("torch")?.origin, "requirements.txt:6");
  assert.equal(byName.get("torchvision")?.marker, 'sys_platform == "linux"');
  assert.equal(byName.get("transformers")?.specifier, ">=4.46,<5", "continuation line joined");
  assert.deepEqual(byName.get("transformers")?.extras, ["torch", "sentencepiece"]);
  assert.equal(byName.get("torchaudio")?.specifier, "==2.5.1%2Bcu124");
  assert.match(byName.get("torchaudio")?.url ?? "", /^https:\/\/download\.pytorch\.org\/whl\/cu124\//);
  assert.equal(byName.get("peft")?.url, "git+https://github.com/huggingface/peft.git@v0.13.2#egg=peft");
  assert.equal(byName.get("torch-pinned")?.url, ".", "-e . names the project directory");
  assert.equal(project.requirementsFiles[2]?.requirements[0]?.specifier, "==1.26.4");
  assert.equal(project.uvLock, null);
});

test("uv-pytorch-extras: uv.lock packages with their registry sources", () => {
  const project = readProject(join(FIXTURES, "uv-pytorch-extras"));
  assert.ok(ProjectSchema.safeParse(project).success);
  assert.deepEqual(
    project.uvLock?.packages.filter((p) => p.name === "torch").map((p) => [p.version, p.source]),
    [
      ["2.5.1", "registry+https://pypi.org/simple"],
      ["2.5.1+cpu", "registry+https://download.pytorch.org/whl/cpu"],
      ["2.5.1+cu118", "registry+https://download.pytorch.org/whl/cu118"],
    ],
  );
  assert.equal(project.uvLock?.packages[0]?.source, "virtual+.");
  assert.deepEqual(
    project.pyproject?.optionalDependencies["cu118"]?.map((r) => r.raw),
    ["torch>=2.5.1"],
  );
  assert.equal(project.pyproject?.uv.indexes.length, 2);
  assert.ok(Array.isArray(project.pyproject?.uv.sources["torch"]));
});

function projectWith(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), "gpuprep-project-"));
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
  return dir;
}

function rejects(dir: string, message: RegExp): void {
  assert.throws(
    () => readProject(dir),
    (error: unknown) => error instanceof UserError && message.test(error.message) && error.hint !== null,
  );
}

test("malformed manifests: UserError naming file and line", () => {
  rejects(
    projectWith({ "pyproject.toml": '[project]\nname = "x"\ndependencies = ["torch==2.5.1",\n' }),
    /pyproject\.toml:\d+: invalid TOML/,
  );
  rejects(
    projectWith({ "requirements.txt": "numpy\ntorch===\n" }),
    /requirements\.txt:2: not a valid requirement: torch===/,
  );
  rejects(
    projectWith({ "requirements.txt": "-r missing.txt\n" }),
    /includes .*missing\.txt, which does not exist/,
  );
  rejects(
    projectWith({ "requirements.txt": "--index-url\n" }),
    /requirements\.txt:1: --index-url needs a value/,
  );
  rejects(projectWith({ "uv.lock": "version = 1\n[[package]]\nname = \n" }), /uv\.lock:3: invalid TOML/);
  rejects(
    projectWith({ "pyproject.toml": '[project]\ndependencies = ["torch ==="]\n' }),
    /project\.dependencies has an invalid requirement/,
  );
});

test("manifest detection and requirement strings", () => {
  assert.equal(hasProjectManifest(join(FIXTURES, "torch-pinned")), true);
  assert.equal(hasProjectManifest(projectWith({ "README.md": "x" })), false);
  const includes = readProject(projectWith({ "requirements-dev.txt": "-r requirements-dev.txt\npytest\n" }));
  assert.equal(includes.requirementsFiles.length, 1, "a file that includes itself is read once");
  assert.deepEqual(parseRequirement("Torch_Vision (>=0.20, <0.21)", "x"), {
    name: "Torch_Vision",
    normalizedName: "torch-vision",
    specifier: ">=0.20,<0.21",
    extras: [],
    marker: null,
    url: null,
    raw: "Torch_Vision (>=0.20, <0.21)",
    origin: "x",
  });
  const direct = parseRequirement(
    "torch @ https://download.pytorch.org/whl/cu124/torch.whl ; python_version >= '3.10'",
    "x",
  );
  assert.equal(direct?.url, "https://download.pytorch.org/whl/cu124/torch.whl");
  assert.equal(direct?.marker, "python_version >= '3.10'");
  assert.equal(parseRequirement("torch >= ", "x"), null);
});
