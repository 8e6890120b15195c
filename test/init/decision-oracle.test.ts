/**
 * The generated decision table (issue 22 item 11): over a thousand (target, driver, project,
 * strategy) rows, each planned by the real planner on project files read by the real reader, and
 * each answer checked against an oracle that shares no code with the planner
 * (decision-oracle.ts: the KB's raw rows, CUDA's documented rules, Python's `packaging`).
 * Compared: strategy, image tag (or index variant), torch series, Python, the number of pins
 * reported, and for an error which plan failed. On failure the first differing rows are printed
 * with the oracle's reasons and the planner's decisions.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, mkdirSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { disableKnowledgeBaseOverlay, loadKnowledgeBase } from "../../src/kb/index.js";
import { readProject } from "../../src/gather/project.js";
import { makePlan } from "../../src/plan/index.js";
import { targetFromName } from "../../src/plan/target.js";
import { containerOf, nativeOf, type Plan } from "../../src/plan/types.js";
import type { ProjectFacts } from "../../src/facts/schema.js";
import { UserError } from "../../src/errors.js";
import { initOptions } from "../support/init-options.js";
import { PYTHON3_PACKAGING, needs } from "../support/needs.js";
import { DecisionOracle, ORACLE_RULES, type Answer, type OracleRow } from "./decision-oracle.js";
import {
  archListCovers,
  cudaCompilesFor,
  driverRunsCuda,
  readTables,
  type ToolkitRow,
} from "./decision-oracle-cuda.js";
import { PackagingOracle } from "./decision-oracle-packaging.js";
import { projectCases, type ProjectCase } from "./decision-oracle-projects.js";
import { DRIVER_BRANCHES, generateRows } from "./decision-oracle-rows.js";

/** The repository root, from dist/test/init or test/init. */
const ROOT = join(
  dirname(fileURLToPath(import.meta.url)),
  ...(import.meta.url.includes("/dist/") ? ["..", "..", ".."] : ["..", ".."]),
);
const DATA = join(ROOT, "src", "kb", "data");

/** What the planner answered, in the oracle's terms. */
type Outcome = Answer & { planner: string };

function outcomeOf(plan: Plan): Outcome {
  const decisions = plan.decisions.map((d) => `${d.topic}: ${d.choice}`).join("; ");
  const pins = plan.conflicts.length;
  const container = containerOf(plan);
  if (container)
    return {
      kind: "container",
      ref: `${container.image.tag}${container.ref.endsWith("-igpu") ? "-igpu" : ""}`,
      series: seriesOf(container.image.torch),
      python: container.image.python ? seriesOf(container.image.python) : null,
      pins,
      planner: decisions,
    };
  const native = nativeOf(plan)!;
  return {
    kind: "native",
    variant: native.build.variant,
    series: native.build.torch,
    python: native.python,
    pins,
    planner: decisions,
  };
}

function seriesOf(version: string): string {
  return /^\d+\.\d+/.exec(version)?.[0] ?? version;
}

function failureOf(error: UserError): Outcome {
  const m = error.message;
  const failure = m.startsWith("neither")
    ? "nothing"
    : /^driver \S+ does not support /.test(m)
      ? "unsupported-driver"
      : m.startsWith("no PyTorch build")
        ? "no-native"
        : m.includes("has a torch the project accepts")
          ? "pin-excludes"
          : m.startsWith("no NGC PyTorch image")
            ? "no-image"
            : `unrecognized: ${m}`;
  return { kind: "error", failure: failure as "nothing", planner: m };
}

/** The planner's answer for a row, with the machine it resolved the target to. */
function plan(facts: ProjectFacts, row: OracleRow): { outcome: Outcome; machine: string } {
  const kb = loadKnowledgeBase();
  const target = targetFromName(kb, { gpu: row.target, driver: row.driver, cpuArch: null, flag: "--target" });
  const machine = `${target.gpuName} ${target.cpuArch} driver ${target.driverVersion ?? "unknown"}`;
  try {
    return {
      outcome: outcomeOf(makePlan(kb, facts, target, initOptions({ strategy: row.strategy }))),
      machine,
    };
  } catch (error) {
    if (error instanceof UserError) return { outcome: failureOf(error), machine };
    throw error;
  }
}

/** The compared fields that differ ("image, torch"), or "" when none does. */
function differing(expected: Answer, actual: Answer): string {
  if (expected.kind !== actual.kind) return `strategy (${expected.kind} vs ${actual.kind})`;
  const fields = ["variant", "ref", "series", "python", "pins", "failure"] as const;
  const a = actual as Record<string, unknown>;
  const e = expected as Record<string, unknown>;
  return fields.filter((f) => e[f] !== a[f]).join(", ");
}

/** The fields compared, as one line each side. */
function summary(o: Answer): string {
  if (o.kind === "error") return `error ${o.failure}`;
  const base = o.kind === "native" ? `native ${o.variant}` : `container ${o.ref}`;
  return `${base} torch ${o.series} python ${o.python ?? "?"} pins ${o.pins}`;
}

function describe(row: OracleRow): string {
  return `${row.target} | driver ${row.driver ?? "none"} | ${row.project.id} | --strategy ${row.strategy}`;
}

function writeProjects(projects: ProjectCase[]): Map<string, ProjectFacts> {
  const root = mkdtempSync(join(tmpdir(), "gpuprep-oracle-"));
  const facts = new Map<string, ProjectFacts>();
  projects.forEach((project, i) => {
    const dir = join(root, `p${i}`);
    mkdirSync(dir);
    for (const [name, text] of Object.entries(project.files)) writeFileSync(join(dir, name), text);
    facts.set(project.id, readProject(dir));
  });
  return facts;
}

test("the oracle's CUDA rules: each fires and stays silent where NVIDIA's documents say", () => {
  const gpu = (cc: string, tegra = false) => {
    const [major = 0, minor = 0] = cc.split(".").map(Number);
    return { major, minor, tegra };
  };
  // cubin X.y on X.z (z >= y) only; Tegra: its own capability only (Programming Guide, Binary Compatibility).
  assert.equal(archListCovers(["sm_86"], gpu("8.9")), "sass");
  assert.equal(archListCovers(["sm_89"], gpu("8.6")), "none");
  assert.equal(archListCovers(["sm_90"], gpu("10.0")), "none");
  assert.equal(archListCovers(["sm_80", "sm_86"], gpu("8.7", true)), "none");
  assert.equal(archListCovers(["sm_110"], gpu("11.0", true)), "sass");
  // PTX JIT on an equal or newer capability; `a` code on its own capability only.
  assert.equal(archListCovers(["sm_90", "compute_90"], gpu("10.0")), "ptx");
  assert.equal(archListCovers(["compute_120"], gpu("9.0")), "none");
  assert.equal(archListCovers(["sm_90a"], gpu("9.0")), "sass");
  assert.equal(archListCovers(["sm_90a", "compute_90a"], gpu("10.0")), "none");
  // The driver: native from the GA driver, minor-version compatibility from the major's floor.
  const cuda131: ToolkitRow = {
    version: "13.1",
    minDriverLinux: "590.44.01",
    minorCompatMinDriverLinux: "580",
  };
  assert.equal(driverRunsCuda("590", cuda131), "native");
  assert.equal(driverRunsCuda("580.65.06", cuda131), "minor");
  assert.equal(driverRunsCuda("575", cuda131), "no");
  // A CUDA without a target list compiles for a GPU only where its neighbours of the same major both do.
  const toolkits = readTables(DATA).toolkits;
  assert.equal(cudaCompilesFor(toolkits, "13.2", gpu("12.1")), true);
  assert.equal(cudaCompilesFor(toolkits, "13.2", gpu("7.0")), false);
  assert.equal(cudaCompilesFor(toolkits, "12.6", gpu("12.1")), false);
});

test("the oracle's PEP 440 answers are packaging's, pre-releases as pip weighs an installed torch", (t) => {
  if (needs(t, PYTHON3_PACKAGING)) return;
  const packaging = new PackagingOracle();
  packaging.ask(["<2.8", ">=2.8", "==2.8.*", "==2.8.0"], ["2.8.0a0+34c6371d24.nv25.08", "2.8.0"]);
  packaging.answerAll();
  assert.equal(packaging.contains("<2.8", "2.8.0a0+34c6371d24.nv25.08"), false);
  assert.equal(packaging.contains(">=2.8", "2.8.0a0+34c6371d24.nv25.08"), false);
  assert.equal(packaging.contains("==2.8.*", "2.8.0a0+34c6371d24.nv25.08"), true);
  assert.equal(packaging.contains("==2.8.0", "2.8.0"), true);
  assert.throws(() => packaging.contains("<2.8", "2.7.0"), /asked packaging nothing/);
});

test("the generated decision table: the planner answers as the independent oracle does", (t) => {
  if (needs(t, PYTHON3_PACKAGING)) return;
  disableKnowledgeBaseOverlay();
  const started = performance.now();
  const tables = readTables(DATA);
  const packaging = new PackagingOracle();
  const oracle = new DecisionOracle(tables, packaging);
  const projects = projectCases();
  oracle.register(projects);
  packaging.answerAll();
  assert.equal(
    packaging.packagingVersion,
    "23.0",
    "the oracle's PEP 440 answers come from Debian bookworm's packaging 23.0",
  );
  const gpuNames = tables.gpus.map((row) => row.name);
  const rows = generateRows(gpuNames, projects, (name) => oracle.target(name));
  const facts = writeProjects(projects);
  const diffs: string[] = [];
  const byField = new Map<string, number>();
  const refs = new Set<string>();
  for (const row of rows) {
    const expected = oracle.expect(row);
    if (expected.kind === "container") refs.add(expected.ref);
    const target = oracle.target(row.target);
    const machine = `${target.gpu.name} ${target.cpu} driver ${row.driver ?? target.system?.driver ?? "unknown"}`;
    const actual = plan(facts.get(row.project.id)!, row);
    const fields = [actual.machine === machine ? "" : "target", differing(expected, actual.outcome)]
      .filter((f) => f !== "")
      .join(", ");
    if (fields === "") continue;
    byField.set(fields, (byField.get(fields) ?? 0) + 1);
    diffs.push(
      `${describe(row)}: ${fields}\n  oracle:  ${machine}: ${summary(expected)}  (${expected.why.join("; ")})\n  planner: ${actual.machine}: ${summary(actual.outcome)}  (${actual.outcome.planner})`,
    );
  }
  const seconds = ((performance.now() - started) / 1000).toFixed(1);
  t.diagnostic(
    `${rows.length} rows, ${packaging.asked} packaging answers, ${diffs.length} differ, ${seconds} s`,
  );
  t.diagnostic(`images expected: ${[...refs].sort().join(" ")}`);
  // The table covers what issue 22 item 11 names.
  assert.ok(rows.length >= 1000, `${rows.length} rows`);
  const planned = new Set(rows.map((r) => oracle.target(r.target).gpu.name));
  assert.deepEqual(
    gpuNames.filter((n) => !planned.has(n)),
    [],
    "GPU rows of the knowledge base without a row",
  );
  for (const driver of [null, ...DRIVER_BRANCHES])
    assert.ok(
      rows.some((r) => r.driver === driver),
      `driver ${driver}`,
    );
  assert.ok(
    rows.some((r) => r.driver !== null && r.driver === oracle.target(r.target).floor),
    "a row at a GPU's floor",
  );
  const forms = new Set(projects.map((p) => p.form));
  for (const form of forms)
    assert.ok(
      rows.some((r) => r.project.form === form),
      `pin form ${form}`,
    );
  assert.ok(refs.size >= 20, `only ${refs.size} images are ever the answer`);
  for (const rule of ORACLE_RULES) t.diagnostic(`oracle rule: ${rule}`);
  assert.equal(
    diffs.length,
    0,
    `${diffs.length} of ${rows.length} rows differ (${[...byField].map(([k, n]) => `${k}: ${n}`).join(", ")}); the first:\n${diffs.slice(0, 25).join("\n")}`,
  );
});
