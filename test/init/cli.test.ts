/** init's contract with the user's files and input: dry runs write nothing, edits are never lost, bad input is one line. */
import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parse as parseToml } from "smol-toml";
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { listFiles, repoRoot, runInit, unwrapped } from "./helpers.js";

const cli = fileURLToPath(new URL("../../src/cli/main.js", import.meta.url));

function project(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), "gpuprep-init-cli-"));
  for (const [name, content] of Object.entries(files)) writeFileSync(join(dir, name), content);
  return dir;
}

const H100_NATIVE = ["--target", "h100", "--driver", "580.95.05", "--strategy", "native"];

test("--dry-run prints the plan and diffs and writes nothing", () => {
  const dir = project({ "requirements.txt": "torch\nrich\n" });
  const result = runInit(["--project", dir, ...H100_NATIVE, "--dry-run"]);
  assert.equal(result.code, 0, result.stderr);
  assert.match(result.stdout, /torch: torch 2\.\d+\.\* from https:\/\/download\.pytorch\.org\/whl\/cu\d+/);
  assert.match(result.stdout, /why: sm_90 SASS runs natively on compute capability 9\.0/);
  assert.match(result.stdout, /\+\+\+ b\/scripts\/setup-native\.sh/);
  assert.deepEqual(listFiles(dir), ["requirements.txt"]);
});

test("re-running updates untouched files, refuses edited ones, and --force keeps a backup", () => {
  const dir = project({ "requirements.txt": "torch\n" });
  assert.equal(runInit(["--project", dir, ...H100_NATIVE]).code, 0);
  const again = runInit(["--project", dir, ...H100_NATIVE]);
  assert.equal(again.code, 0, again.stderr);
  assert.match(again.stdout, /SETUP\.md: unchanged/);

  const script = join(dir, "scripts", "setup-native.sh");
  writeFileSync(script, readFileSync(script, "utf8") + "echo my own step\n");
  const refused = runInit(["--project", dir, ...H100_NATIVE, "--python", "3.11"]);
  assert.equal(refused.code, 2);
  assert.match(
    refused.stderr,
    /^gpuprep: error: init would overwrite scripts\/setup-native\.sh \(edited since gpuprep wrote it\)/,
  );
  assert.match(readFileSync(script, "utf8"), /echo my own step/);

  const forced = runInit(["--project", dir, ...H100_NATIVE, "--python", "3.11", "--force"]);
  assert.equal(forced.code, 0, forced.stderr);
  assert.doesNotMatch(readFileSync(script, "utf8"), /echo my own step/);
  const backups = readdirSync(join(dir, ".gpuprep", "backups"));
  assert.equal(backups.length, 1);
  assert.match(
    readFileSync(join(dir, ".gpuprep", "backups", backups[0]!, "scripts", "setup-native.sh"), "utf8"),
    /echo my own step/,
  );
});

test("a file init did not write is never replaced without --force", () => {
  const dir = project({ "requirements.txt": "torch\n", "SETUP.md": "# my notes\n" });
  const result = runInit(["--project", dir, ...H100_NATIVE]);
  assert.equal(result.code, 2);
  assert.match(result.stderr, /SETUP\.md \(not written by gpuprep\)/);
  assert.equal(readFileSync(join(dir, "SETUP.md"), "utf8"), "# my notes\n");
  assert.equal(existsSync(join(dir, "scripts")), false, "nothing is written when one file is refused");
});

test("native: pyproject.toml gets the torch index appended, everything else kept", () => {
  const original =
    '[project]\nname = "demo"\nversion = "0.1.0"\ndependencies = ["torch>=2.6", "torchvision"]\n\n[tool.uv.sources]\nmylib = { path = "../mylib" }\n';
  const dir = project({ "pyproject.toml": original });
  const result = runInit(["--project", dir, ...H100_NATIVE]);
  assert.equal(result.code, 0, result.stderr);
  const text = readFileSync(join(dir, "pyproject.toml"), "utf8");
  const doc = JSON.parse(JSON.stringify(parseToml(text))) as {
    tool: {
      uv: {
        sources: Record<string, unknown>;
        index: Array<{ name: string; url: string; explicit: boolean }>;
      };
    };
  };
  const index = doc.tool.uv.index[0]!;
  assert.match(index.url, /^https:\/\/download\.pytorch\.org\/whl\/cu\d+$/);
  assert.equal(index.explicit, true);
  assert.deepEqual(doc.tool.uv.sources["torch"], [{ index: index.name }]);
  assert.deepEqual(doc.tool.uv.sources["torchvision"], [{ index: index.name }]);
  assert.deepEqual(doc.tool.uv.sources["mylib"], { path: "../mylib" });
  assert.ok(
    text.startsWith(original.split("[tool.uv.sources]")[0]!),
    "the user's lines come first, unchanged",
  );
  const backups = readdirSync(join(dir, ".gpuprep", "backups"));
  assert.equal(
    readFileSync(join(dir, ".gpuprep", "backups", backups[0]!, "pyproject.toml"), "utf8"),
    original,
  );
});

test("native source builds: uv builds them against the venv's torch, the user's build settings kept", () => {
  const original =
    '[project]\nname = "demo"\nversion = "0.1.0"\ndependencies = ["torch", "xformers", "flash-attn"]\n\n[tool.uv.extra-build-dependencies]\nflash-attn = ["torch"]\n';
  const dir = project({ "pyproject.toml": original });
  const spark = ["--target", "dgx-spark", "--driver", "580", "--strategy", "native"];
  const result = runInit(["--project", dir, ...spark]);
  assert.equal(result.code, 0, result.stderr);
  const doc = JSON.parse(JSON.stringify(parseToml(readFileSync(join(dir, "pyproject.toml"), "utf8")))) as {
    tool: { uv: Record<string, Record<string, unknown>> };
  };
  // xformers has no aarch64 wheel: it goes under the user's existing table, whose entry stays.
  assert.deepEqual(doc.tool.uv["extra-build-dependencies"], {
    "flash-attn": ["torch"],
    xformers: ["ninja", { requirement: "torch", "match-runtime": true }],
  });
  // flash-attn has wheels only as GitHub release assets (KB), so it is built too, with its own
  // arch variable: sm_120 is the one value its setup.py compiles that runs on 12.1.
  assert.deepEqual(doc.tool.uv["extra-build-variables"], {
    xformers: { TORCH_CUDA_ARCH_LIST: "12.1" },
    "flash-attn": {
      TORCH_CUDA_ARCH_LIST: "12.1",
      FLASH_ATTN_CUDA_ARCHS: "120",
      FLASH_ATTENTION_FORCE_BUILD: "TRUE",
    },
  });
  const script = readFileSync(join(dir, "scripts", "setup-native.sh"), "utf8");
  assert.match(
    script,
    /MAX_JOBS="\$\(build_jobs\)" uv sync --python "\$PYTHON_VERSION" --no-binary-package xformers --no-binary-package flash-attn\n/,
  );
  // nvcc is checked before the sync that builds them.
  assert.ok(script.indexOf('NVCC_MINIMUM="13.0"') < script.indexOf("uv sync"));

  // A requirements-only project: torch and the build tools first, then the requirements, the
  // source-built package without build isolation so it compiles against that torch.
  const plain = project({ "requirements.txt": "xformers\nrich\n" });
  assert.equal(runInit(["--project", plain, ...spark]).code, 0);
  const lines = readFileSync(join(plain, "scripts", "setup-native.sh"), "utf8").split("\n");
  const at = (pattern: RegExp) => lines.findIndex((line) => pattern.test(line));
  assert.ok(at(/uv pip install .*"torch==/) >= 0);
  assert.ok(at(/uv pip install .*setuptools wheel ninja/) > at(/uv pip install .*"torch==/));
  assert.ok(
    at(
      /TORCH_CUDA_ARCH_LIST="12\.1" .*--no-binary xformers --no-build-isolation-package xformers -r requirements\.txt/,
    ) > at(/setuptools wheel ninja/),
  );
});

test("native from a wheelhouse: no index pin (uv --no-index would hide it), builds take the planned torch series", () => {
  const dir = project({
    "pyproject.toml": '[project]\nname = "demo"\nversion = "0.1.0"\ndependencies = ["torch", "xformers"]\n',
  });
  mkdirSync(join(dir, "wheelhouse"));
  const args = [
    "--target",
    "dgx-spark",
    "--driver",
    "580",
    "--strategy",
    "native",
    "--wheelhouse",
    "wheelhouse",
  ];
  const result = runInit(["--project", dir, ...args]);
  assert.equal(result.code, 0, result.stderr);
  const doc = JSON.parse(JSON.stringify(parseToml(readFileSync(join(dir, "pyproject.toml"), "utf8")))) as {
    tool: { uv: Record<string, unknown> };
  };
  assert.equal(doc.tool.uv["index"], undefined);
  assert.equal(doc.tool.uv["sources"], undefined);
  const deps = doc.tool.uv["extra-build-dependencies"] as Record<string, unknown[]>;
  assert.match(String(deps["xformers"]![1]), /^torch==2\.\d+\.\*$/);
  assert.match(result.stdout, /torch is not pinned to an index: it comes from wheelhouse\//);
  const script = readFileSync(join(dir, "scripts", "setup-native.sh"), "utf8");
  assert.match(
    script,
    /uv sync --python "\$PYTHON_VERSION" --offline --no-index --find-links wheelhouse --no-binary-package xformers/,
  );
});

test("a torch pin no build runs is reported, not obeyed silently", () => {
  const dir = project({ "requirements.txt": "torch==2.5.1\n" });
  const result = runInit([
    "--project",
    dir,
    "--target",
    "rtx-5070-ti",
    "--driver",
    "580.95.05",
    "--strategy",
    "native",
    "--dry-run",
  ]);
  assert.equal(result.code, 0, result.stderr);
  assert.match(
    unwrapped(result.stdout),
    /pins in the project that are not obeyed:\n {2}- torch==2\.5\.1 \(requirements\.txt:1\): no torch build of that release runs on NVIDIA GeForce RTX 5070 Ti; the nearest that runs is 2\.7, so the plan uses torch==2\.7\.\*\. Change the line: requirements\.txt:1: torch==2\.5\.1 {2}-> {2}torch==2\.7\.\*/,
  );
});

test("bad input: one line with a hint, never a stack trace", () => {
  const dir = project({ "requirements.txt": "torch\n" });
  const cases: Array<[string[], RegExp]> = [
    [
      ["--target", "rtx-5075-ti"],
      /error: --target "rtx-5075-ti" is not a GPU gpuprep knows\n {2}hint: closest: NVIDIA GeForce RTX 5070 Ti/,
    ],
    [["--target", "h100", "--driver", "latest"], /--driver "latest" is not a Linux driver version/],
    [
      ["--target", "dgx-spark", "--arch", "x86_64"],
      /NVIDIA GB10 is an integrated system with an aarch64 CPU, not x86_64/,
    ],
    [
      ["--target", "h100", "--strategy", "docker"],
      /--strategy "docker" is not one of container, native, auto/,
    ],
    [["--target", "h100", "--volume", "data"], /--volume "data" is not HOST:CONTAINER\[:ro\]/],
    [["--target", "h100", "--wheelhouse", "nowhere"], /--wheelhouse nowhere is not a directory/],
    [["--driver", "580"], /--driver and --arch describe a named machine/],
    [["--target", "h100", "--bogus"], /init: Unknown option '--bogus'/],
  ];
  for (const [args, expected] of cases) {
    const result = runInit(["--project", dir, ...args]);
    assert.equal(result.code, 2, `${args.join(" ")}: ${result.stdout}`);
    assert.match(result.stderr, expected);
    assert.doesNotMatch(result.stderr, /\n\s+at /, "no stack trace");
  }
  const empty = mkdtempSync(join(tmpdir(), "gpuprep-init-empty-"));
  const none = runInit(["--project", empty, "--target", "h100"]);
  assert.equal(none.code, 2);
  assert.match(none.stderr, /has no pyproject\.toml, requirements\*\.txt, pixi\.toml or environment\.yml/);
  assert.deepEqual(listFiles(dir), ["requirements.txt"]);
});

test("init for this machine plans from one gathering: the GPU nvidia-smi lists and the project beside it", () => {
  const capture = join(repoRoot, "test", "fixtures", "nvidia-smi", "h100");
  const bin = mkdtempSync(join(tmpdir(), "gpuprep-init-smi-"));
  // The H100 capture replayed by a stand-in (test/fixtures/nvidia-smi/README.md says how it was made).
  writeFileSync(
    join(bin, "nvidia-smi"),
    `#!/bin/sh\ncase "$1" in --query-gpu=*) exec cat ${capture}/query.csv;; *) exec cat ${capture}/nvidia-smi.txt;; esac\n`,
    { mode: 0o755 },
  );
  const dir = project({ "pyproject.toml": '[project]\nname = "here-and-now"\ndependencies = ["torch"]\n' });
  const saved = join(bin, "facts.json");
  const result = spawnSync(
    process.execPath,
    [cli, "init", "--project", dir, "--dry-run", "--json", "--save", saved],
    {
      encoding: "utf8",
      env: { ...process.env, PATH: `${bin}:${process.env["PATH"] ?? ""}`, XDG_CACHE_HOME: bin },
    },
  );
  assert.equal(result.status, 0, result.stderr);
  const { plan } = JSON.parse(result.stdout);
  assert.equal(plan.target.origin, "this machine");
  assert.equal(plan.target.gpuName, "NVIDIA H100 80GB HBM3");
  assert.equal(plan.target.driverVersion, "580.159.04");
  assert.equal(plan.project.name, "here-and-now");
  assert.deepEqual(listFiles(dir), ["pyproject.toml"]);
  // --save wrote what the plan was made from: the machine and the project, in one snapshot.
  const facts = JSON.parse(readFileSync(saved, "utf8"));
  assert.equal(facts.schema, "gpuprep.facts");
  assert.equal(facts.host.nvidia.gpus[0].name, "NVIDIA H100 80GB HBM3");
  assert.equal(facts.project.pyproject.name, "here-and-now");
  // --from plans for that machine again, with no nvidia-smi anywhere, and the same decisions.
  const replay = runInit(["--project", dir, "--dry-run", "--json", "--from", saved]);
  assert.equal(replay.code, 0, replay.stderr);
  const again = JSON.parse(replay.stdout).plan;
  assert.equal(again.target.gpuName, plan.target.gpuName);
  // Decisions the same but for where the machine came from.
  const choices = (p: { decisions: Array<{ topic: string; choice: string }> }) =>
    p.decisions.map((d) => `${d.topic}: ${d.choice}`);
  assert.deepEqual(choices(again), choices(plan));
  assert.equal(again.decisions[0].reason, `from ${saved}`);
  const both = runInit(["--project", dir, "--from", saved, "--save", join(bin, "again.json")]);
  assert.equal(both.code, 2);
  assert.match(
    both.stderr,
    /init: --save writes the facts gathered here; with --from, --target or --gpu nothing is gathered/,
  );
});
