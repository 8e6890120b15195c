/**
 * What stories.test.ts runs and checks: the stories (example, machine, strategies), running one
 * (init into a copy, then the script it wrote under the stand-ins), and the checks. Each check reads
 * the files init wrote and the stand-ins' log, and judges them by the story (its seed's lines), the
 * issue-22 item it waits for, and oracles outside the planner (story-files.ts). Seed 004 (build
 * patterns, no project) is the expectation for the build stages of seed 002.
 */
import { fileURLToPath } from "node:url";
import { type TestContext } from "node:test";
import assert from "node:assert/strict";
import { chmodSync, existsSync, readFileSync, realpathSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { parse as parseToml } from "smol-toml";
import { parse as parseYaml } from "yaml";
import { copyExample, listFiles, runInit } from "./helpers.js";
import { makeStandIns, runScript, type Call } from "./standins.js";
import {
  compareRelease,
  condaBuilds,
  dockerignoreExcludes,
  hasSassFor,
  indexVariant,
  ngcImage,
  ngcTag,
  normalizeName,
  parseRequirement,
  readDockerfile,
  readRequirementsFile,
  satisfies,
  wheelBuilds,
  type Requirement,
} from "./story-files.js";

export type Strategy = "container" | "native" | "auto";
export type Kind = "container" | "native";

export interface Machine {
  args: string[];
  computeCapability: "12.0" | "12.1";
  platform: "linux-x86_64" | "linux-aarch64";
}

// No seed names a driver version (002 and 003 name CUDA 13.0, the toolkit), so none is passed:
// gpuprep then plans a named system for the driver it ships, and says so.
export const DGX_SPARK: Machine = {
  args: ["--target", "dgx-spark"],
  computeCapability: "12.1",
  platform: "linux-aarch64",
};
export const RTX_5070_TI: Machine = {
  args: ["--target", "rtx-5070-ti"],
  computeCapability: "12.0",
  platform: "linux-x86_64",
};

export interface Outcome {
  strategy: Strategy;
  args: string[];
  dir: string;
  /** The project's files before init, by relative path. */
  before: Map<string, string>;
  init: { code: number | null; stdout: string; stderr: string };
  kind: Kind | null;
  script: { path: string; code: number | null; stdout: string; stderr: string } | null;
  calls: Call[];
}

export interface Check {
  name: string;
  run: (o: Outcome) => void;
}

export interface Story {
  example: string;
  machine: Machine;
  extra: string[];
  strategies: Strategy[];
  container: Check[];
  native: Check[];
}

// ---------------------------------------------------------------- running a story

/** `nvcc --version` and `ptxas --version` of CUDA 13.0.88 (captured on the build machine), for
 * scripts that check the toolkit before a source build; no CI machine has NVIDIA's CUDA 13. */
const CUDA_BANNERS: Record<string, [string, string]> = {
  nvcc: ["nvcc: NVIDIA (R) Cuda compiler driver", "Built on Wed_Aug_20_01:58:59_PM_PDT_2025"],
  ptxas: ["ptxas: NVIDIA (R) Ptx optimizing assembler", "Built on Wed_Aug_20_01:55:12_PM_PDT_2025"],
};

const PTXAS_HELP = fileURLToPath(
  new URL("../../../test/fixtures/cuda/ptxas-13.0.88-help.txt", import.meta.url),
);

function writeToolkitStandIns(bin: string): void {
  for (const [tool, [name, built]] of Object.entries(CUDA_BANNERS)) {
    const banner = [name, "Copyright (c) 2005-2025 NVIDIA Corporation", built]
      .concat(["Cuda compilation tools, release 13.0, V13.0.88", "Build cuda_13.0.r13.0/compiler.36424714_0"])
      .join("\\n");
    // ptxas --help: the real CUDA 13.0.88 text (test/fixtures/cuda), whose --gpu-name list the scripts grep.
    const help = tool === "ptxas" ? `if [ "$1" = --help ]; then cat '${PTXAS_HELP}'; exit 0; fi\n` : "";
    writeFileSync(join(bin, tool), `#!/bin/sh\n${help}printf '${banner}\\n'\n`);
    chmodSync(join(bin, tool), 0o755);
  }
}

export function runStory(story: Story, strategy: Strategy): Outcome {
  const dir = copyExample(story.example);
  const before = new Map(listFiles(dir).map((f) => [f, readFileSync(join(dir, f), "utf8")]));
  const args = [...story.machine.args, "--strategy", strategy, ...story.extra];
  const init = runInit(["--project", dir, ...args]);
  const outcome: Outcome = { strategy, args, dir, before, init, kind: null, script: null, calls: [] };
  if (init.code !== 0) return outcome;
  const scripts = listFiles(dir).filter((f) => /^scripts\/[^/]+\.sh$/.test(f) && !before.has(f));
  const path = scripts.includes("scripts/run-container.sh") ? "scripts/run-container.sh" : scripts[0];
  if (!path) return outcome;
  outcome.kind = path === "scripts/run-container.sh" ? "container" : "native";
  const standIns = makeStandIns(["docker", "uv", "pixi", "conda", "git", "nvidia-smi"]);
  writeToolkitStandIns(standIns.bin);
  const ran = runScript(join(dir, path), standIns);
  outcome.script = { path, ...ran };
  outcome.calls = standIns.calls();
  return outcome;
}

function firstLines(text: string): string {
  return text.trim().split("\n").slice(0, 2).join(" / ").slice(0, 700);
}

export async function checkStory(t: TestContext, story: Story, strategy: Strategy): Promise<void> {
  const o = runStory(story, strategy);
  const command = `gpuprep init ${o.args.join(" ")}`;
  await t.test("init writes a plan (exit 0)", () => {
    assert.equal(o.init.code, 0, `${command} exited ${o.init.code}: ${firstLines(o.init.stderr)}`);
    assert.ok(o.kind, `${command} wrote no scripts/*.sh: ${listFiles(o.dir).join(", ")}`);
  });
  const container = [...CONTAINER, ...story.container];
  const expected: Record<Strategy, Check[]> = {
    container,
    native: story.native,
    auto: [...container, ...story.native],
  };
  const checks = o.kind === null ? expected[strategy] : o.kind === "container" ? container : story.native;
  const notReached = o.kind === null ? `not reached: ${command} wrote no plan` : false;
  await t.test(
    `${o.script?.path ?? "the generated script"} runs through with the stand-ins`,
    { skip: notReached },
    () =>
      assert.equal(
        o.script?.code,
        0,
        `${o.script?.path} exited ${o.script?.code}: ${firstLines(o.script?.stderr ?? "")}`,
      ),
  );
  for (const check of checks) await t.test(check.name, { skip: notReached }, () => check.run(o));
}

// ---------------------------------------------------------------- what the project names

/** The project's own dependencies: pyproject [project].dependencies, or pixi.toml's (conda names as PyPI's). */
function projectDependencies(o: Outcome): Requirement[] {
  const pyproject = o.before.get("pyproject.toml");
  if (pyproject) {
    const doc = parseToml(pyproject) as { project?: { dependencies?: string[] } };
    return (doc.project?.dependencies ?? [])
      .map(parseRequirement)
      .filter((r): r is Requirement => r !== null);
  }
  const pixi = parseToml(o.before.get("pixi.toml") ?? "") as Record<string, Record<string, unknown>>;
  const conda = Object.entries(pixi["dependencies"] ?? {}).filter(([name]) => name !== "python");
  return [...conda, ...Object.entries(pixi["pypi-dependencies"] ?? {})].map(([name, value]) => {
    const spec = typeof value === "string" ? value : String((value as { version?: string }).version ?? "");
    const pypiName = name === "pytorch" ? "torch" : name; // the only conda name here that differs on PyPI
    return { name: normalizeName(pypiName), spec: spec.replace(/\s+/g, ""), raw: `${name} ${spec}` };
  });
}

const read = (o: Outcome, file: string) => readFileSync(join(o.dir, file), "utf8");
const toml = (o: Outcome, file: string) => parseToml(read(o, file)) as Record<string, unknown>;

/** Files init or the script wrote or changed (text), by relative path. */
function generatedFiles(o: Outcome): Map<string, string> {
  return new Map(
    listFiles(o.dir)
      .filter((f) => !f.startsWith(".gpuprep/") && !f.startsWith(".venv/") && !f.startsWith(".pixi/"))
      .map((f) => [f, read(o, f)] as const)
      .filter(([f, text]) => o.before.get(f) !== text),
  );
}

const callsOf = (o: Outcome, tool: string) => o.calls.filter((c) => c.tool === tool);
const valueAfter = (argv: string[], ...flags: string[]) => {
  const at = argv.findIndex((a) => flags.includes(a));
  return at >= 0 ? argv[at + 1] : undefined;
};

// ---------------------------------------------------------------- container checks (every story)

function requirementsOf(o: Outcome) {
  return readRequirementsFile(join(o.dir, "gpuprep-requirements.txt"));
}

/** A comment of gpuprep-requirements.txt that names `text` and says more than that (a reason). */
function explained(comments: string[], text: string): boolean {
  return comments.some((c) => c.includes(text) && c.replace(text, "").trim().split(/\s+/).length >= 3);
}

/** A comment that names the dependency as a word (its PyPI or its manifest name) and gives a reason;
 * for a pinned one, the pinned version too ("# torch==2.5.1 (pixi.toml:12): ..."). */
function explainedDependency(comments: string[], dependency: Requirement): boolean {
  const names = [dependency.name, dependency.raw.split(/[\s=<>!~[;@]/)[0]!];
  const version = /\d+(?:\.\d+)+/.exec(dependency.spec)?.[0];
  const word = (name: string) => new RegExp(`(^|[^\\w.-])${name.replace(/[.-]/g, "[-_.]")}($|[^\\w-])`, "i");
  return comments.some(
    (c) =>
      names.some((n) => word(n).test(c)) &&
      (version === undefined || c.includes(version)) &&
      c.split(/\s+/).length >= 4,
  );
}

export const CONTAINER: Check[] = [
  {
    name: "run-container.sh builds the image from the project and starts it with the GPU",
    run: (o) => {
      const build = callsOf(o, "docker").find((c) => c.argv[0] === "build");
      const run = callsOf(o, "docker").find((c) => c.argv[0] === "run");
      assert.ok(build && run, `docker build and docker run: ${JSON.stringify(o.calls.map((c) => c.argv))}`);
      assert.equal(build.cwd, realpathSync(o.dir));
      assert.equal(valueAfter(run.argv, "--gpus"), "all", run.argv.join(" "));
    },
  },
  {
    name: "every dependency the project names is installed into the image, or said why not (issue 22 item 6)",
    run: (o) => {
      const { requirements, comments } = requirementsOf(o);
      const installed = new Set(requirements.map((r) => r.name));
      const missing = projectDependencies(o).filter(
        (d) => d.name !== "torch" && !installed.has(d.name) && !explainedDependency(comments, d),
      );
      assert.deepEqual(
        missing.map((d) => d.raw),
        [],
        `never installed, and no word why; gpuprep-requirements.txt has ${[...installed].join(" ") || "nothing"}`,
      );
      const dockerfile = read(o, "Dockerfile");
      const copied = /^COPY gpuprep-requirements\.txt (\S+)/m.exec(dockerfile)?.[1];
      assert.ok(
        copied && dockerfile.includes(`-r ${copied}`),
        "the Dockerfile installs gpuprep-requirements.txt",
      );
    },
  },
  {
    name: "the project's pins are kept, or changed with the reason beside them (issue 22 item 2)",
    run: (o) => {
      const { requirements, comments } = requirementsOf(o);
      const changed = projectDependencies(o).flatMap((d) => {
        const kept = requirements.find((r) => r.name === d.name);
        return kept && kept.spec !== d.spec && !explainedDependency(comments, d)
          ? [`${d.raw} -> ${kept.raw}`]
          : [];
      });
      assert.deepEqual(changed, [], "a pin changed with no word why");
      const torch = projectDependencies(o).find((d) => d.name === "torch" && d.spec !== "");
      const tag = ngcTag(readDockerfile(read(o, "Dockerfile")));
      const imageTorch = /^\d+\.\d+\.\d+/.exec(ngcImage(tag ?? "")?.torch ?? "")?.[0] ?? "";
      if (torch && !satisfies(imageTorch, torch.spec))
        assert.ok(
          explainedDependency(comments, torch),
          `${torch.raw}: the image's torch ${imageTorch} breaks it, and no comment says so`,
        );
    },
  },
  {
    name: ".dockerignore keeps .pixi/ and .venv/ out of the build context (issue 22 item 6; seed 000 line 86)",
    run: (o) => {
      const ignore = read(o, ".dockerignore");
      for (const path of [
        ".pixi/envs/default/lib/python3.9/site-packages/torch/__init__.py",
        ".venv/lib/python3.11/site-packages/torch/__init__.py",
        ".venv/bin/python",
      ])
        assert.ok(dockerignoreExcludes(ignore, path), `${path} reaches the build context`);
      assert.ok(!dockerignoreExcludes(ignore, "gpuprep-requirements.txt"), "the requirements must reach it");
    },
  },
  {
    name: "the container masks /workspace/.venv so a host venv cannot shadow the image's torch (issue 22 item 6; seed 001 lines 86-92)",
    run: (o) => {
      const run = callsOf(o, "docker").find((c) => c.argv[0] === "run")?.argv ?? [];
      const masked = run.some(
        (a, i) =>
          (["-v", "--volume", "--tmpfs"].includes(run[i - 1] ?? "") &&
            a.split(":")[0] === "/workspace/.venv") ||
          (run[i - 1] === "--mount" &&
            /(?:^|,)(?:target|dst|destination)=\/workspace\/\.venv(?:,|$)/.test(a)),
      );
      assert.ok(masked, `docker run mounts nothing over /workspace/.venv: ${run.join(" ")}`);
      const compose = parseYaml(read(o, "compose.yaml")) as {
        services: Record<string, { volumes?: Array<string | { target?: string }>; tmpfs?: string[] }>;
      };
      for (const [name, service] of Object.entries(compose.services)) {
        const targets = [
          ...(service.volumes ?? []).map((v) =>
            typeof v === "string" ? v.split(":").at(v.includes(":") ? 1 : 0) : v.target,
          ),
          ...(service.tmpfs ?? []).map((v) => v.split(":")[0]),
        ];
        assert.ok(
          targets.includes("/workspace/.venv"),
          `compose service ${name} mounts nothing over /workspace/.venv`,
        );
      }
    },
  },
];

// ---------------------------------------------------------------- native checks (every story)

/** The torch the native plan installs: minor release and PyTorch index variant, from the files init wrote. */
function plannedWheel(o: Outcome): { torch: string; variant: string } {
  const pyproject = toml(o, "pyproject.toml") as {
    tool?: { uv?: { sources?: Record<string, unknown>; index?: Array<{ name: string; url: string }> } };
  };
  const source = [pyproject.tool?.uv?.sources?.["torch"]].flat()[0] as { index?: string } | undefined;
  const url = pyproject.tool?.uv?.index?.find((i) => i.name === source?.index)?.url ?? "";
  const variant = indexVariant(url);
  assert.ok(
    variant,
    `pyproject.toml routes torch to no PyTorch index: ${JSON.stringify(pyproject.tool?.uv)}`,
  );
  const constraints = existsSync(join(o.dir, "gpuprep-constraints.txt"))
    ? readRequirementsFile(join(o.dir, "gpuprep-constraints.txt")).requirements
    : [];
  const pin = [...constraints, ...projectDependencies(o)].find(
    (r) => r.name === "torch" && r.spec.startsWith("=="),
  );
  const torch = /^==(\d+\.\d+)/.exec(pin?.spec ?? "")?.[1];
  assert.ok(torch, "no torch release pinned in gpuprep-constraints.txt or the project");
  return { torch, variant };
}

export function nativeTorchHasSass(machine: Machine): Check {
  return {
    name: `torch has sm_120 code for compute capability ${machine.computeCapability} (knowledge base: torch-builds.json)`,
    run: (o) => {
      const { torch, variant } = plannedWheel(o);
      const build = wheelBuilds().find(
        (b) => b.torch === torch && b.variant === variant && b.platform === machine.platform,
      );
      assert.ok(build, `no torch ${torch} ${variant} ${machine.platform} build in the knowledge base`);
      assert.ok(
        hasSassFor(build.archList, machine.computeCapability),
        `torch ${torch} ${variant}: ${build.archList.join(" ")}`,
      );
    },
  };
}

export const UV_PROJECT: Check[] = [
  {
    name: "every dependency the project names is installed: [project].dependencies kept, `uv sync` run (issue 22 item 6)",
    run: (o) => {
      const now =
        (toml(o, "pyproject.toml") as { project?: { dependencies?: string[] } }).project?.dependencies ?? [];
      const lost = projectDependencies(o).filter((d) => !now.some((line) => line.trim() === d.raw));
      assert.deepEqual(
        lost.map((d) => d.raw),
        [],
        "pyproject.toml lost or changed these",
      );
      const sync = callsOf(o, "uv").find((c) => c.argv[0] === "sync");
      assert.ok(sync, `no uv sync: ${JSON.stringify(callsOf(o, "uv").map((c) => c.argv))}`);
      assert.equal(sync.cwd, realpathSync(o.dir));
    },
  },
];

// ---------------------------------------------------------------- story 000: pixi on GB10

export function pixiTorchRuns(machine: Machine): Check {
  return {
    name: "pixi.toml's torch has sm_120/sm_121 code for GB10, from conda-forge or the PyTorch index (issue 22 item 6; knowledge base)",
    run: (o) => {
      const pixi = toml(o, "pixi.toml") as Record<string, Record<string, unknown>>;
      const pypi = pixi["pypi-dependencies"]?.["torch"] as { version?: string; index?: string } | undefined;
      if (pypi) {
        const variant = indexVariant(pypi.index ?? "");
        const builds = wheelBuilds().filter(
          (b) =>
            b.variant === variant &&
            b.platform === machine.platform &&
            satisfies(`${b.torch}.0`, pypi.version ?? ""),
        );
        assert.ok(builds.length > 0, `no knowledge-base build for torch ${JSON.stringify(pypi)}`);
        for (const b of builds)
          assert.ok(hasSassFor(b.archList, machine.computeCapability), `torch ${b.torch} ${b.variant}`);
        const python = tomlText(pixi["dependencies"]?.["python"]);
        assert.ok(
          builds.some((b) => b.pythons.some((p) => satisfies(p, python))),
          `python ${python}: no such wheel`,
        );
        return;
      }
      const conda = pixi["dependencies"]?.["pytorch"] as
        string | { version?: string; build?: string } | undefined;
      assert.ok(conda, "pixi.toml names no torch");
      const spec = typeof conda === "string" ? conda : (conda.version ?? "");
      const cudaBuild = typeof conda === "string" ? undefined : /cuda(\d+)(\d)/.exec(conda.build ?? "");
      const systemCuda = tomlText(pixi["system-requirements"]?.["cuda"]);
      assert.ok(
        cudaBuild || systemCuda,
        "neither a CUDA build string nor [system-requirements] cuda: a CPU build can win",
      );
      const builds = condaBuilds().filter(
        (b) =>
          b.platform === machine.platform &&
          b.versions.some((v) => satisfies(v, spec)) &&
          (!cudaBuild || b.cuda === `${cudaBuild[1]}.${cudaBuild[2]}`) &&
          (!systemCuda || compareRelease(b.cuda, systemCuda) <= 0),
      );
      assert.ok(
        builds.length > 0,
        `no conda-forge build for pytorch ${JSON.stringify(conda)} with cuda <= ${systemCuda}`,
      );
      for (const b of builds)
        assert.ok(
          hasSassFor(b.archList, machine.computeCapability),
          `pytorch ${b.versions.join(",")} cuda ${b.cuda}`,
        );
    },
  };
}

export const PIXI_STAYS_PIXI: Check = {
  name: "the project stays a pixi project: every other dependency kept in pixi.toml, `pixi install` run, no venv beside it (issue 22 item 6)",
  run: (o) => {
    const was = parseToml(o.before.get("pixi.toml")!) as Record<string, Record<string, unknown>>;
    const now = toml(o, "pixi.toml") as Record<string, Record<string, unknown>>;
    const lost = Object.entries(was["dependencies"] ?? {}).filter(
      ([name, spec]) =>
        !["pytorch", "python"].includes(name) &&
        JSON.stringify(now["dependencies"]?.[name]) !== JSON.stringify(spec),
    );
    assert.deepEqual(
      lost.map(([name]) => name),
      [],
      "pixi.toml lost or changed these",
    );
    const install = callsOf(o, "pixi").find((c) => c.argv[0] === "install");
    assert.ok(install, `no pixi install: ${JSON.stringify(o.calls.map((c) => [c.tool, ...c.argv]))}`);
    const uvEnvs = callsOf(o, "uv").filter((c) => ["venv", "sync", "pip"].includes(c.argv[0] ?? ""));
    assert.deepEqual(
      uvEnvs.map((c) => c.argv.join(" ")),
      [],
      "a uv environment beside the pixi one",
    );
  },
};

export const GB10_IMAGE: Check = {
  name: "the image is an NGC PyTorch image for arm64 that runs on GB10: 25.09 or newer (seed 000 lines 83, 96-101; seed 002 line 71)",
  run: (o) => {
    const tag = ngcTag(readDockerfile(read(o, "Dockerfile")));
    assert.ok(tag, "the Dockerfile builds FROM no nvcr.io/nvidia/pytorch image");
    assert.ok(
      compareRelease(tag, "25.09") >= 0,
      `${tag} is older than 25.09, the first the seed users ran on GB10`,
    );
    assert.equal(ngcImage(tag)?.platforms.arm64, true, `${tag}: no linux/arm64 image in the knowledge base`);
  },
};

// ---------------------------------------------------------------- story 001: uv, torch==2.7.1, RTX 5070 Ti

export const SEED_001_CONTAINER: Check[] = [
  {
    name: "the image's torch is 2.7, the minor torch==2.7.1 names (issue 22 item 2; seed 001 lines 75-81)",
    run: (o) => {
      const tag = ngcTag(readDockerfile(read(o, "Dockerfile")));
      assert.ok(tag, "the Dockerfile builds FROM no nvcr.io/nvidia/pytorch image");
      assert.match(ngcImage(tag)?.torch ?? "", /^2\.7\./, `${tag} brings torch ${ngcImage(tag)?.torch}`);
    },
  },
  {
    name: "torch==2.7.1 is moved out of the installed requirements with its reason (issue 22 item 2)",
    run: (o) => {
      const { requirements, comments } = requirementsOf(o);
      assert.ok(
        !requirements.some((r) => r.name === "torch"),
        "gpuprep-requirements.txt would reinstall torch",
      );
      assert.ok(
        explained(comments, "torch==2.7.1"),
        `no comment says why torch==2.7.1 is left out: ${comments.join(" | ")}`,
      );
    },
  },
  {
    name: "torchvision==0.22.1 is left to the image, which pins its own torchvision, and says so (issue 22 item 2)",
    run: (o) => {
      const { requirements, comments } = requirementsOf(o);
      const left = requirements.find((r) => r.name === "torchvision");
      assert.ok(!left, `gpuprep-requirements.txt keeps ${left?.raw} against the image's own torchvision`);
      assert.ok(
        explained(comments, "torchvision==0.22.1"),
        `no comment says why torchvision==0.22.1 is left out`,
      );
      const stages = readDockerfile(read(o, "Dockerfile"));
      const frozen = stages.flatMap((s) => s.runs).find((r) => /pip list --format=freeze/.test(r)) ?? "";
      assert.doesNotMatch(
        frozen,
        /grep[^|>]*torchvision/,
        "the image's torchvision is left out of its constraints",
      );
      const output = / > (\S+)/.exec(frozen)?.[1];
      assert.ok(
        output && stages.at(-1)?.env.get("PIP_CONSTRAINT")?.includes(output),
        "the image's packages constrain pip",
      );
    },
  },
  {
    name: "numpy: nothing asks for NumPy 2 in an image whose torch is built against NumPy 1.x (seed 001 lines 112-130)",
    run: (o) => {
      const numpy = requirementsOf(o).requirements.filter((r) => r.name === "numpy");
      const two = numpy.filter((r) => !satisfies("1.26.4", r.spec.replace(/^@.*/, "")));
      // Where the KB does not know the image's numpy (25.02's is not sourced), a pin that stays is
      // pinned against the image's own at build time (base-packages.txt), so pip stops rather than
      // install NumPy 2; then the plan must say so before the build, naming the pin.
      const warned = two.filter((r) =>
        new RegExp(
          `${r.raw.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}: the knowledge base does not know the numpy of`,
        ).test(o.init.stdout),
      );
      assert.deepEqual(
        two.filter((r) => !warned.includes(r)).map((r) => r.raw),
        [],
        "these would replace the image's NumPy 1.x (1.26.4, the last 1.x, is excluded), and the plan does not warn",
      );
    },
  },
];

export const SEED_001_NATIVE: Check[] = [
  {
    name: "torch==2.7.1, torchvision==0.22.1 and numpy==2.2.6 are kept, torchvision from torch's index (issue 22 item 2)",
    run: (o) => {
      const now =
        (toml(o, "pyproject.toml") as { project?: { dependencies?: string[] } }).project?.dependencies ?? [];
      for (const pin of ["torch==2.7.1", "torchvision==0.22.1", "numpy==2.2.6"])
        assert.ok(now.includes(pin), `${pin} is gone`);
      const sources = (toml(o, "pyproject.toml") as { tool?: { uv?: { sources?: Record<string, unknown> } } })
        .tool?.uv?.sources;
      assert.deepEqual(
        sources?.["torchvision"],
        sources?.["torch"],
        "torchvision must come from the index torch comes from",
      );
      assert.equal(plannedWheel(o).torch, "2.7", "torch 2.7, the release torchvision 0.22.1 belongs to");
    },
  },
];

// ---------------------------------------------------------------- stories 002 and 003: unsloth on GB10

/** Where a RUN or a uv call builds a package from source: its --no-binary lists and flags. */
const buildsFromSource = (words: string, name: string) =>
  new RegExp(`--no-binary(?:-package)?[= ](?:\\S*,)?(?:${name}|:all:)(?:[,\\s]|$)`).test(words);
/** A RUN that compiles something: a --no-binary install, a pip wheel, a setup.py or a git checkout build. */
const compiles = (run: string) =>
  buildsFromSource(run, "\\S+") || /\bpip3? wheel\b|setup\.py|git\+https/.test(run);
/** triton publishes wheels only: "`pip install triton` fails because there is no source distribution"
 * (triton-lang/triton issue 8380, 2025-10-06). A build needs its git repository at a tag or commit. */
const TRITON_GIT = /git\+https:\/\/github\.com\/triton-lang\/triton(?:\.git)?@\S+/;
const TRITON_PTXAS = /TRITON_PTXAS_PATH=["']?\S*\/bin\/ptxas\b/;

export const XFORMERS_FOR_12_1_CONTAINER: Check = {
  name: "xformers is built from source for 12.1 only, in a build stage (seed 002 lines 89-94)",
  run: (o) => {
    const stages = readDockerfile(read(o, "Dockerfile"));
    const builds = stages.filter((s) =>
      s.runs.some((r) => buildsFromSource(r, "xformers") || /xformers.*setup\.py/.test(r)),
    );
    assert.ok(builds.length > 0, "no stage builds xformers");
    for (const s of builds) {
      const list =
        s.env.get("TORCH_CUDA_ARCH_LIST") ??
        /TORCH_CUDA_ARCH_LIST="?([\d. +PTX]+)/.exec(s.runs.join(" "))?.[1];
      assert.equal(list, "12.1", `stage ${s.name}: TORCH_CUDA_ARCH_LIST=${list}`);
    }
  },
};

export const TRITON_NOT_SDIST_CONTAINER: Check = {
  name: "triton is not built from a PyPI sdist: TRITON_PTXAS_PATH is the toolkit's ptxas, or triton builds from its git tag (issue 22 item 7)",
  run: (o) => {
    const dockerfile = read(o, "Dockerfile");
    const stages = readDockerfile(dockerfile);
    const sdist = stages
      .flatMap((s) => s.runs)
      .filter((r) => buildsFromSource(r, "triton") && !TRITON_GIT.test(r));
    assert.deepEqual(sdist, [], "pip builds triton from PyPI, where it has no sdist");
    const ptxas = stages.at(-1)?.env.get("TRITON_PTXAS_PATH") ?? "";
    const compose = read(o, "compose.yaml");
    const run =
      callsOf(o, "docker")
        .find((c) => c.argv[0] === "run")
        ?.argv.join(" ") ?? "";
    assert.ok(
      /\/bin\/ptxas$/.test(ptxas) ||
        TRITON_PTXAS.test(compose) ||
        TRITON_PTXAS.test(run) ||
        TRITON_GIT.test(dockerfile),
      "neither TRITON_PTXAS_PATH to the toolkit's ptxas nor a triton build from its git tag",
    );
  },
};

export const BUILD_PATTERNS_004: Check = {
  name: "the build follows seed 004: builder stages, BuildKit cache mounts, ccache (seed 004 lines 94-106, 141-144)",
  run: (o) => {
    const stages = readDockerfile(read(o, "Dockerfile"));
    const compiling = stages.filter((s) => s.runs.some(compiles));
    assert.ok(compiling.length > 0 && stages.length > compiling.length, "source builds in their own stages");
    assert.match(read(o, "Dockerfile"), /^COPY --from=/m, "the final stage takes the built wheels only");
    for (const s of compiling) {
      const run = s.runs.find(compiles)!;
      assert.match(run, /--mount=type=cache,target=\S*pip/, `stage ${s.name}: no pip cache mount`);
      const ccache = s.env.get("CCACHE_DIR");
      assert.ok(
        ccache && run.includes(`--mount=type=cache,target=${ccache}`),
        `stage ${s.name}: no ccache cache mount`,
      );
    }
  },
};

/** unsloth 2025.12.9 (the release uv.lock holds) declares requires-python ">=3.9,<3.14": unslothai/unsloth
 * pyproject.toml at 1ff6fc85f0, the commit that set __version__ = "2025.12.9". (2026.2.1 widened it to <3.15.) */
const UNSLOTH_REQUIRES_PYTHON = ">=3.9,<3.14";

export const UNSLOTH_NATIVE: Check[] = [
  {
    name: "Python is one unsloth 2025.12.9 (>=3.9,<3.14) and the project (>=3.12) accept (issue 22 item 5)",
    run: (o) => {
      const creating = callsOf(o, "uv").find((c) => ["sync", "venv"].includes(c.argv[0] ?? ""));
      assert.ok(creating, "no uv sync or uv venv");
      const python =
        valueAfter(creating.argv, "--python", "-p") ?? o.before.get(".python-version")?.trim() ?? "";
      assert.ok(
        satisfies(python, UNSLOTH_REQUIRES_PYTHON),
        `Python ${python}: unsloth 2025.12.9 requires ${UNSLOTH_REQUIRES_PYTHON}`,
      );
      assert.ok(satisfies(python, ">=3.12"), `Python ${python}: the project requires >=3.12`);
    },
  },
  {
    name: "UV_NO_SYNC=1 or equivalent keeps `uv run` from undoing the source builds (seed 003 lines 100-113; issue 22 item 10)",
    run: (o) => {
      const written = [...generatedFiles(o)].filter(([f]) => f !== o.script?.path);
      const noSync = written.filter(([, text]) => /UV_NO_SYNC=1|uv run --no-sync/.test(text)).map(([f]) => f);
      const uv = (toml(o, "pyproject.toml") as { tool?: { uv?: { "no-binary-package"?: string[] } } }).tool
        ?.uv;
      // xformers is compiled here; triton is not rebuilt at all (its PyPI wheel stays, pointed at the
      // toolkit's ptxas: the triton check below), so only xformers must survive a sync.
      const syncBuilds = ["xformers"].every((p) => uv?.["no-binary-package"]?.includes(p));
      assert.ok(
        noSync.length > 0 || syncBuilds,
        `nothing the plan wrote (${written.map(([f]) => f).join(", ")}) keeps uv run from syncing xformers back to a PyPI wheel`,
      );
    },
  },
  {
    name: "xformers is built from source for 12.1 (seed 003 lines 80-85)",
    run: (o) => {
      const builds = callsOf(o, "uv").filter((c) => buildsFromSource(c.argv.join(" "), "xformers"));
      assert.ok(
        builds.length > 0,
        `no uv call builds xformers: ${JSON.stringify(callsOf(o, "uv").map((c) => c.argv))}`,
      );
      for (const c of builds) assert.equal(c.env["TORCH_CUDA_ARCH_LIST"], "12.1", c.argv.join(" "));
    },
  },
  {
    name: "triton is not built from a PyPI sdist: TRITON_PTXAS_PATH is the toolkit's ptxas, or triton builds from its git tag (issue 22 item 7)",
    run: (o) => {
      const sdist = callsOf(o, "uv").filter(
        (c) => buildsFromSource(c.argv.join(" "), "triton") && !TRITON_GIT.test(c.argv.join(" ")),
      );
      assert.deepEqual(
        sdist.map((c) => `uv ${c.argv.join(" ")}`),
        [],
        "uv builds triton from PyPI, where it has no sdist",
      );
      const written = [...generatedFiles(o).values()].join("\n");
      const fromGit = o.calls.some(
        (c) =>
          TRITON_GIT.test(c.argv.join(" ")) ||
          (c.tool === "git" && c.argv.some((a) => /triton-lang\/triton/.test(a))),
      );
      assert.ok(
        TRITON_PTXAS.test(written) || fromGit,
        "neither TRITON_PTXAS_PATH to the toolkit's ptxas nor a triton build from its git tag",
      );
    },
  },
];

// ---------------------------------------------------------------- the stories

export const STORIES: Story[] = [
  {
    example: "seed-000-virnucpro-pixi",
    machine: DGX_SPARK,
    extra: [],
    strategies: ["container", "native", "auto"],
    container: [GB10_IMAGE],
    native: [pixiTorchRuns(DGX_SPARK), PIXI_STAYS_PIXI],
  },
  {
    example: "seed-001-neuralripper-uv",
    machine: RTX_5070_TI,
    extra: [],
    strategies: ["container", "auto"],
    container: SEED_001_CONTAINER,
    native: [nativeTorchHasSass(RTX_5070_TI), ...UV_PROJECT, ...SEED_001_NATIVE],
  },
  {
    example: "seed-002-gemma3-g2p-container",
    machine: DGX_SPARK,
    extra: ["--build-from-source", "xformers,triton"],
    strategies: ["container", "auto"],
    container: [GB10_IMAGE, XFORMERS_FOR_12_1_CONTAINER, TRITON_NOT_SDIST_CONTAINER, BUILD_PATTERNS_004],
    native: [nativeTorchHasSass(DGX_SPARK), ...UV_PROJECT, ...UNSLOTH_NATIVE],
  },
  {
    example: "seed-003-gemma3-g2p-native",
    machine: DGX_SPARK,
    extra: ["--build-from-source", "xformers,triton"],
    strategies: ["native", "auto"],
    container: [GB10_IMAGE, XFORMERS_FOR_12_1_CONTAINER, TRITON_NOT_SDIST_CONTAINER, BUILD_PATTERNS_004],
    native: [nativeTorchHasSass(DGX_SPARK), ...UV_PROJECT, ...UNSLOTH_NATIVE],
  },
];

/** A pixi.toml value as the text a check compares: a table shows as JSON, never "[object Object]". */
function tomlText(value: unknown): string {
  if (value === undefined || value === null) return "";
  return typeof value === "string" ? value : JSON.stringify(value);
}
