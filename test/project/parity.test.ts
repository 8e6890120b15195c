/**
 * Doctor and init read one project the same way (issue 23 item 1): for generated projects (every
 * manifest kind and PyTorch index URL form, pins of every shape) and the project fixtures, on real
 * captured machines (an H100; the same capture with its GPU changed to a GB10 and an RTX 5070 Ti),
 * doctor's install prediction and init's native plan must agree on the variant, the release series
 * and what to do with a pin:
 * - where doctor predicts a build that runs natively from a route or a local-version pin, init
 *   plans that variant and series and reports no torch conflict;
 * - where doctor predicts a build with no code for the GPU, init does not plan that build: it plans
 *   another and, where a route or a local version chose the build, reports what it did not obey;
 * - from PyPI (no route), both land on the same release series.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseFacts } from "../../src/facts/io.js";
import type { Facts } from "../../src/facts/schema.js";
import { readProject } from "../../src/gather/project.js";
import { loadKnowledgeBase } from "../../src/kb/index.js";
import { coverageFor, parseComputeCapability } from "../../src/kb/compat.js";
import { makePlan } from "../../src/plan/index.js";
import { targetFromFacts } from "../../src/plan/target.js";
import { predictTorchInstalls } from "../../src/project/install-prediction.js";
import { UserError } from "../../src/errors.js";
import { initOptions } from "../support/init-options.js";

const kb = loadKnowledgeBase();
const FACTS = fileURLToPath(new URL("../../../test/fixtures/facts/", import.meta.url));
const PROJECTS = fileURLToPath(new URL("../../../test/fixtures/projects/", import.meta.url));

function capture(name: string): Facts {
  return parseFacts(readFileSync(join(FACTS, name), "utf8"), name);
}

/** The H100 capture with its GPU, driver and CPU changed: one field set changed, as rule-cases do. */
function machine(gpu: string, cc: string, driver: string, cpuArch: "x86_64" | "aarch64"): Facts {
  const facts = capture("h100-healthy.json");
  facts.host.cpuArch = cpuArch;
  facts.host.nvidia.driverVersion = driver;
  facts.host.nvidia.gpus = facts.host.nvidia.gpus
    .slice(0, 1)
    .map((g) => ({ ...g, name: gpu, computeCapability: cc }));
  return facts;
}

const MACHINES: [string, Facts][] = [
  ["H100", capture("h100-healthy.json")],
  ["GB10", machine("NVIDIA GB10", "12.1", "580.95.05", "aarch64")],
  ["RTX 5070 Ti", machine("NVIDIA GeForce RTX 5070 Ti", "12.0", "580.95.05", "x86_64")],
];

const INDEX_FORMS = [
  (v: string) => `https://download.pytorch.org/whl/${v}`,
  (v: string) => `https://download.pytorch.org/whl/${v}/`,
  (v: string) => `https://download-r2.pytorch.org/whl/${v}`,
];
const VARIANTS = ["cu118", "cu124", "cu126", "cu128", "cu130"];
const PINS = ["", "==2.5.1", ">=2.7", "==2.7.1", "<2.8"];

/** Generated projects: name -> files. */
function generatedProjects(): Map<string, Record<string, string>> {
  const out = new Map<string, Record<string, string>>();
  for (const pin of PINS) {
    out.set(`pypi ${pin}`, { "requirements.txt": `torch${pin}\n` });
    out.set(`pip pyproject ${pin}`, {
      "pyproject.toml": `[project]\nname = "p"\nversion = "0"\ndependencies = ["torch${pin}"]\n`,
    });
    for (const variant of VARIANTS)
      INDEX_FORMS.forEach((form, i) => {
        const url = form(variant);
        out.set(`req --index-url ${variant}#${i} ${pin}`, {
          "requirements.txt": `--index-url ${url}\ntorch${pin}\n`,
        });
        out.set(`req --extra-index-url ${variant}#${i} ${pin}`, {
          "requirements.txt": `--extra-index-url ${url}\ntorch${pin}\n`,
        });
        out.set(`uv source ${variant}#${i} ${pin}`, {
          "pyproject.toml": `[project]\nname = "p"\nversion = "0"\ndependencies = ["torch${pin}"]\n[tool.uv.sources]\ntorch = [{ index = "pt" }]\n[[tool.uv.index]]\nname = "pt"\nurl = "${url}"\nexplicit = true\n`,
        });
        out.set(`uv first index ${variant}#${i} ${pin}`, {
          "pyproject.toml": `[project]\nname = "p"\nversion = "0"\ndependencies = ["torch${pin}"]\n[[tool.uv.index]]\nname = "pt"\nurl = "${url}"\n`,
        });
        out.set(`uv dev group ${variant}#${i} ${pin}`, {
          "pyproject.toml": `[project]\nname = "p"\nversion = "0"\ndependencies = []\n[dependency-groups]\ndev = ["torch${pin}"]\n[tool.uv.sources]\ntorch = [{ index = "pt" }]\n[[tool.uv.index]]\nname = "pt"\nurl = "${url}"\nexplicit = true\n`,
        });
      });
    out.set(`local version ${pin}`, { "requirements.txt": `torch==2.7.1+cu128\n` });
  }
  return out;
}

function writeProject(files: Record<string, string>): string {
  const dir = join(mkdtempSync(join(tmpdir(), "gpuprep-parity-")), "p");
  mkdirSync(dir);
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
  return dir;
}

interface Disagreement {
  where: string;
  what: string;
}

function checkParity(where: string, facts: Facts, projectDir: string): Disagreement[] {
  const project = readProject(projectDir);
  const withProject: Facts = { ...facts, project };
  const prediction = predictTorchInstalls(withProject, kb)[0];
  if (!prediction || prediction.ecosystem !== "pypi") return [];
  const cc = parseComputeCapability(facts.host.nvidia.gpus[0]!.computeCapability!)!;
  let plan;
  try {
    plan = makePlan(
      kb,
      project,
      targetFromFacts(kb, withProject, "parity"),
      initOptions({ strategy: "native" }),
    );
  } catch (error) {
    if (error instanceof UserError) return []; // nothing runs natively here: no plan to compare
    throw error;
  }
  if (plan.strategy !== "native") return [{ where, what: "native was asked" }];
  const build = prediction.builds[0];
  const torchConflict = plan.conflicts.some(
    (c) => c.requirement?.normalizedName === "torch" || (c.requirement === null && /torch/.test(c.message)),
  );
  const out: Disagreement[] = [];
  if (prediction.unknown || !build) return out;
  const runs = build.cuda !== null && coverageFor(build.archList, cc).how === "sass";
  const named = prediction.variant !== null && !prediction.fromPypi;
  if (runs && named) {
    if (plan.native.build.variant !== prediction.variant)
      out.push({
        where,
        what: `doctor: ${prediction.variant} runs; init planned ${plan.native.build.variant}`,
      });
    if (plan.native.build.torch !== build.torch)
      out.push({ where, what: `doctor: torch ${build.torch}; init planned ${plan.native.build.torch}` });
    if (torchConflict)
      out.push({
        where,
        what: `init reports a torch conflict doctor does not: ${plan.conflicts.map((c) => c.message).join("; ")}`,
      });
  } else if (build.cuda !== null && !runs) {
    const same = plan.native.build.variant === prediction.variant && plan.native.build.torch === build.torch;
    if (same) out.push({ where, what: `doctor: ${build.label} has no code here; init planned it` });
    // From PyPI the variant is not the project's choice: init may keep the pin with another variant.
    // A route or a local version is: init says which it did not obey.
    if (named && !torchConflict)
      out.push({
        where,
        what: `doctor fires on ${build.label}; init reports no torch pin or route it did not obey`,
      });
  } else if (runs && prediction.fromPypi && plan.native.build.torch !== build.torch) {
    out.push({
      where,
      what: `from PyPI doctor predicts torch ${build.torch}; init planned ${plan.native.build.torch}`,
    });
  }
  return out;
}

test("doctor's prediction and init's plan agree on every generated project, on three machines", () => {
  const disagreements: Disagreement[] = [];
  let compared = 0;
  for (const [name, files] of generatedProjects()) {
    const dir = writeProject(files);
    for (const [machineName, facts] of MACHINES) {
      disagreements.push(...checkParity(`${name} on ${machineName}`, facts, dir));
      compared++;
    }
  }
  assert.ok(compared > 500, `${compared} cases`);
  if (process.env["PARITY_DUMP"]) for (const d of disagreements) console.error(`${d.where} | ${d.what}`);
  assert.deepEqual(disagreements.slice(0, 15), [], `${disagreements.length} of ${compared} disagree`);
});

test("doctor's prediction and init's plan agree on the project fixtures and examples", () => {
  const dirs = readdirSync(PROJECTS, { withFileTypes: true })
    .filter((d) => d.isDirectory())
    .map((d) => join(PROJECTS, d.name));
  const disagreements: Disagreement[] = [];
  for (const dir of dirs)
    for (const [machineName, facts] of MACHINES)
      disagreements.push(...checkParity(`${dir.split("/").pop()} on ${machineName}`, facts, dir));
  assert.deepEqual(disagreements, []);
});
