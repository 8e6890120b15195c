/**
 * What doctor predicts about installing a project, on real captures and the derived cases of
 * captures.ts: the rule ids, severities, the manifest lines named, and that the install commands
 * come from the `kb resolve` resolver (compared with it, not hard-coded).
 */
import { asDriver } from "../support/driver.js";
import { test } from "node:test";
import assert from "node:assert/strict";
import type { Facts } from "../../src/facts/schema.js";
import type { Finding, Rule } from "../../src/findings/types.js";
import { loadKnowledgeBase } from "../../src/kb/index.js";
import { predictTorchInstalls } from "../../src/project/install-prediction.js";
import { projectTorchArchNotCovered } from "../../src/rules/project-torch-arch-not-covered.js";
import { projectTorchCpuOnly } from "../../src/rules/project-torch-cpu-only.js";
import { projectReplacesTorch } from "../../src/rules/project-replaces-torch.js";
import { torchNotInstalled } from "../../src/rules/torch-not-installed.js";
import { cpuOnlyTorch } from "../../src/rules/cpu-only-torch.js";
import { DERIVED, derive, loadCapture, onGb10 } from "./captures.js";
import { asCapability } from "../support/capability.js";

const kb = loadKnowledgeBase();
const labels = (finding: Finding) => finding.evidence.map((e) => e.label);
const only = (rule: Rule, facts: Facts): Finding => {
  const findings = rule.check(facts, kb);
  assert.equal(findings.length, 1, findings.map((f) => f.message).join("\n"));
  return findings[0]!;
};

/** What `gpuprep kb resolve` ranks first for this machine. */
function resolverChoices(facts: Facts) {
  const gpu = facts.host.nvidia.gpus[0]!;
  return kb.torchBuildsFor({
    computeCapability: asCapability(gpu.computeCapability!),
    driverVersion: asDriver(facts.host.nvidia.driverVersion!),
    cpuArch: facts.host.cpuArch as "x86_64" | "aarch64",
    python: facts.python.interpreter.version,
  });
}

function resolverBest(facts: Facts) {
  return resolverChoices(facts)[0]!;
}

/**
 * Where no build the pin allows runs, the fix moves the pin to the nearest series a build runs for
 * (the newer on a tie), as init's pin policy does: computed here from the resolver's list.
 */
function nearestRunning(facts: Facts, series: string) {
  const minor = (s: string) => Number(s.split(".")[0]) * 100 + Number(s.split(".")[1]);
  const running = resolverChoices(facts).filter((c) => c.runs === "sass");
  const distance = (c: (typeof running)[number]) => Math.abs(minor(c.build.torch) - minor(series));
  const nearest = Math.min(...running.map(distance));
  return running
    .filter((c) => distance(c) === nearest)
    .sort((a, b) => minor(b.build.torch) - minor(a.build.torch))[0]!;
}

test("seed 000: pixi + conda-forge torch 2.5.1 on GB10 is predicted, with the pixi.toml lines to change", () => {
  const facts = DERIVED["pixi-gb10-conda-forge-on-gb10"]!();
  const [prediction, ...others] = predictTorchInstalls(facts, kb);
  assert.equal(others.length, 0, "the dev environment gets the same torch and is not reported twice");
  assert.equal(prediction?.command, "pixi install");
  assert.equal(prediction?.channel, "conda-forge");
  // Build 12 of 2.5.1 has only CUDA 12.6 variants: the 12.0 ones are superseded.
  assert.deepEqual(
    prediction?.builds.map((b) => [b.torch, b.cuda]),
    [["2.5", "12.6"]],
  );
  const finding = only(projectTorchArchNotCovered, facts);
  assert.equal(finding.severity, "warning", "compute_90 PTX JIT runs, slowly");
  assert.ok(labels(finding).includes("pixi.toml:17"));
  assert.ok(labels(finding).includes("pixi.toml:13"));
  const best = kb.condaTorchBuildsFor({
    computeCapability: asCapability("12.1"),
    driverVersion: asDriver(facts.host.nvidia.driverVersion!),
    platform: "linux-aarch64",
    channel: "conda-forge",
  })[0]!;
  const version = [...best.build.versions].sort().pop();
  assert.ok(
    finding.fix.commands.includes(
      `# pixi.toml:17: pytorch = "2.5.1"  ->  pytorch = { version = "==${version}", build = "cuda${best.build.cuda!.replace(".", "")}*", channel = "conda-forge" }`,
    ),
    finding.fix.commands.join("\n"),
  );
  assert.ok(finding.fix.commands.includes('# pixi.toml:13: cuda = "12.0"  ->  cuda = "13.0"'));
  assert.deepEqual(projectTorchCpuOnly.check(facts, kb), []);
});

test("without [system-requirements] cuda, pixi installs conda-forge's CPU build (test-local change: systemCuda removed)", () => {
  const facts = derive("pixi-gb10-conda-forge-project", (f) => {
    onGb10(f);
    f.project!.condaManifests![0]!.systemCuda = {};
  });
  const finding = only(projectTorchCpuOnly, facts);
  assert.equal(finding.severity, "error");
  assert.match(finding.message, /CPU-only build/);
  assert.ok(finding.fix.commands.some((c) => c.startsWith("# pixi.toml: add [system-requirements] cuda = ")));
  assert.deepEqual(projectTorchArchNotCovered.check(facts, kb), []);
});

test("issue 11: a pyproject routing torch to cu124 on an RTX 5090: error, with the exact lines and the resolver's build", () => {
  const facts = DERIVED["torch-pinned-on-rtx5090"]!();
  const findings = projectTorchArchNotCovered.check(facts, kb);
  assert.deepEqual(
    findings.map((f) => [f.ruleId, f.severity]),
    [
      ["project-torch-arch-not-covered", "error"],
      ["project-torch-arch-not-covered", "error"],
    ],
  );
  const [uv, pip] = findings as [Finding, Finding];
  assert.deepEqual(labels(uv).slice(1, 4), ["pyproject.toml:6", "pyproject.toml:25", "pyproject.toml:30"]);
  const best = nearestRunning(facts, "2.5");
  assert.ok(
    uv.fix.commands.includes(
      `# pyproject.toml:30: url = "https://download.pytorch.org/whl/cu124"  ->  url = "${best.build.indexUrl}"`,
    ),
    uv.fix.commands.join("\n"),
  );
  assert.ok(
    uv.fix.commands.includes(`# pyproject.toml:6: "torch==2.5.1"  ->  "torch==${best.build.torch}.*"`),
  );
  assert.ok(labels(pip).includes("requirements.txt:6"));
  assert.ok(
    pip.fix.commands.includes(
      `# requirements.txt: --extra-index-url https://download.pytorch.org/whl/cu124  ->  --extra-index-url ${best.build.indexUrl}`,
    ),
  );
  assert.deepEqual(
    projectTorchArchNotCovered.check(DERIVED["torch-pinned-on-h100"]!(), kb),
    [],
    "cu124 has sm_90",
  );
});

test("PyPI's torch 2.5.1 on aarch64 is the CPU wheel; the fix names the CUDA index", () => {
  const facts = DERIVED["project-pins-torch-2.5.1-on-gb10"]!();
  const findings = projectTorchCpuOnly.check(facts, kb);
  assert.equal(findings.length, 2);
  const best = resolverBest(facts);
  for (const finding of findings) {
    assert.match(finding.message, /PyPI's torch 2\.5 wheel for aarch64 is the CPU-only build/);
    assert.ok(
      finding.fix.commands.some((c) => c.includes(best.build.indexUrl)),
      finding.fix.commands.join("\n"),
    );
  }
});

test("pixi environments: the default one takes the cpu index, -e gpu the cu124 one", () => {
  const facts = DERIVED["pixi-pypi-cu124-on-rtx5090"]!();
  // ">=2.5.1": the newest release on each index, as pip and uv pick it (every release is on the cpu index).
  const newest = (rows: { torch: string }[]) =>
    rows
      .map((r) => r.torch)
      .sort((a, b) => Number(a.split(".")[1]) - Number(b.split(".")[1]))
      .pop();
  const x86 = kb.data.torchBuilds.filter((r) => r.platform === "linux-x86_64");
  assert.deepEqual(
    predictTorchInstalls(facts, kb).map((p) => [p.command, p.variant, p.builds[0]?.torch]),
    [
      ["pixi install", "cpu", newest(kb.data.torchBuilds)],
      ["pixi install -e gpu", "cu124", newest(x86.filter((r) => r.variant === "cu124"))],
    ],
  );
  assert.equal(only(projectTorchCpuOnly, facts).evidence[1]?.label, "pixi.toml:17");
  const gpu = only(projectTorchArchNotCovered, facts);
  assert.ok(
    gpu.fix.commands[0]?.startsWith(
      '# pixi.toml:13: torch>=2.5.1  ->  torch = { version = ">=2.5.1", index = "https://download.pytorch.org/whl/cu130" }',
    ),
    gpu.fix.commands.join("\n"),
  );
});

test("environment.yml on the pytorch channel: no sm_120 on an RTX 5090, not known on linux-aarch64", () => {
  const rtx = only(projectTorchArchNotCovered, DERIVED["conda-pytorch-channel-on-rtx5090"]!());
  assert.equal(rtx.severity, "error");
  assert.ok(labels(rtx).includes("environment.yml:15") && labels(rtx).includes("environment.yml:17"));
  // The project fix takes torch through the file's pip: list, the torch the environment fix names
  // (torch-not-installed here) and init plans (issue 22 item 8), not a conda-forge build of its own.
  assert.ok(
    rtx.fix.commands.includes(
      "# environment.yml:15: pytorch::pytorch  ->  (comment it out: torch comes from the pip: list)",
    ),
  );
  assert.ok(
    rtx.fix.commands.includes(
      "# environment.yml:17: pytorch::pytorch-cuda=12.1  ->  (comment it out: torch comes from the pip: list)",
    ),
  );
  const pipLine = rtx.fix.commands.find((c) => c.startsWith("# environment.yml, under pip::"));
  const named =
    /--extra-index-url https:\/\/download\.pytorch\.org\/whl\/(cu\d+) and torch==(\d+\.\d+)\.\*/.exec(
      pipLine ?? "",
    );
  assert.ok(named, rtx.fix.commands.join("\n"));
  const envFix = only(torchNotInstalled, DERIVED["conda-pytorch-channel-on-rtx5090"]!());
  assert.match(envFix.fix.summary, new RegExp(`torch ${named[2]!.replace(".", "\\.")} ${named[1]} `));
  assert.ok(rtx.fix.commands.at(-1)!.endsWith("env update --file environment.yml --prune"));
  const gb10 = only(projectTorchArchNotCovered, DERIVED["conda-pytorch-channel-on-gb10"]!());
  assert.equal(gb10.severity, "info");
  assert.match(gb10.message, /not known/);
  assert.match(gb10.message, /linux-64 and win-64 only/);
});

test("uv.lock decides what uv sync installs (test-local change: the lock holds one torch)", () => {
  const facts = derive("torch-pinned-project", (f) => {
    f.project!.uvLock = {
      path: `${f.project!.dir}/uv.lock`,
      packages: [
        { name: "torch", version: "2.5.1+cu118", source: "registry+https://download.pytorch.org/whl/cu118" },
      ],
    };
  });
  const uv = predictTorchInstalls(facts, kb).find((p) => p.tool === "uv");
  assert.equal(uv?.exactVersion, "2.5.1+cu118");
  assert.equal(uv?.variant, "cu118");
  assert.ok(uv?.lines.some((l) => l.origin === "uv.lock"));
});

test("project-replaces-torch: uv sync in the project's .venv would swap Debian's CPU torch for cu126", () => {
  const finding = only(projectReplacesTorch, loadCapture("uv-venv-replaces-torch"));
  assert.equal(finding.severity, "warning");
  assert.match(finding.message, /uv sync would replace it with torch 2\.\d+\.x \(cu126\)/);
  assert.ok(labels(finding).includes("pyproject.toml:8") && labels(finding).includes("pyproject.toml:12"));
  assert.ok(finding.fix.commands.includes("uv lock --upgrade-package torch"));
  // Same project, but doctor checked another interpreter: uv sync does not touch it.
  assert.deepEqual(projectReplacesTorch.check(DERIVED["h100-fast-torch-pinned"]!(), kb), []);
});

test("torch-not-installed and cpu-only-torch give the resolver's build for pip, uv and a container", () => {
  const facts = DERIVED["pixi-gb10-conda-forge-on-gb10"]!();
  const best = resolverBest(facts);
  const image = kb.preferredNgcImage({
    computeCapability: asCapability("12.1"),
    driverVersion: asDriver(facts.host.nvidia.driverVersion!),
    cpuArch: "aarch64",
  });
  const missing = only(torchNotInstalled, facts);
  const [pip, uv, docker] = missing.fix.commands;
  const minor = (version: string) => Number(version.split(".")[1]);
  const lag = minor(best.build.torch) - minor(image?.image.torch ?? "0.0");
  assert.ok(lag > 2, "this case covers an image that trails the wheel");
  assert.ok(
    pip?.includes(`-m ${best.pip}`) ||
      pip?.endsWith(`"torch==${best.build.torch}.*" --index-url ${best.build.indexUrl}`),
    pip,
  );
  assert.match(pip ?? "", new RegExp(`--index-url ${best.build.indexUrl}$`));
  assert.match(
    uv ?? "",
    /^uv pip install --python \S+ "torch==\S+" --index-url https:\/\/download\.pytorch\.org\/whl\/cu\d+$/,
  );
  assert.equal(
    docker,
    // 25.10 runs here but trails the wheel by more than two releases: named with its torch, not offered to run.
    `# the NGC image that runs here brings torch ${image?.image.torch}, ${lag} releases behind: docker run --gpus all --ipc=host --rm -it -v "$PWD":/workspace -w /workspace ${image?.image.image}`,
  );
  // Without a GPU: no resolver query, the plain advice.
  assert.ok(
    only(torchNotInstalled, loadCapture("no-torch-python3")).fix.commands.includes(
      `${loadCapture("no-torch-python3").python.interpreter.executable} -m pip install torch`,
    ),
  );
  const cpu = only(cpuOnlyTorch, DERIVED["project-pins-torch-2.5.1-on-gb10"]!());
  assert.equal(cpu.severity, "error");
  assert.ok(
    cpu.fix.commands[0]?.includes(
      `--force-reinstall "torch==${best.build.torch}.*" --index-url ${best.build.indexUrl}`,
    ),
    cpu.fix.commands[0],
  );
  assert.ok(cpu.fix.commands[1]?.startsWith("uv pip install --reinstall-package torch"));
});
