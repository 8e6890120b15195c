// The diagnosis accuracy benchmark (issue 15 item 5): builds broken environments for real on this
// machine (cases.mjs), runs the built CLI's `doctor --json` on each, and scores whether doctor names
// the expected cause; healthy controls count false alarms. Prints a table and writes a JSON result.
//
// Usage: node bench/diagnosis/run.mjs --out FILE [--only ID[,ID...]] [--jobs N] [--keep]
// Needs: `npm run build`; Debian's python3-torch and python3-venv (/usr/bin/python3); gcc; nvcc.
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { DEBIAN_PYTHON, ROOT, sh } from "./build.mjs";
import { CASES, sharedEnvironments, writeProject } from "./cases.mjs";
import { onGpuHost } from "./graft.mjs";
import { renderTable, scoreCase, summarize } from "./score.mjs";

const CLI = join(ROOT, "dist/src/cli/main.js");
const SCHEMA = "gpuprep.bench.diagnosis";
const SCHEMA_VERSION = 1;
/** Only these variables of the caller reach doctor: a case's result must not depend on the shell it ran from. */
const PASSED_ENV = ["PATH", "HOME", "LANG", "LC_ALL", "TERM", "USER"];

function fail(message, hint) {
  console.error(`bench/diagnosis: ${message}${hint ? `\n  hint: ${hint}` : ""}`);
  process.exit(2);
}

function parseArgs(argv) {
  const options = { out: null, only: null, jobs: 2, keep: false };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    const value = () => argv[++i] ?? fail(`${arg} needs a value`, "node bench/diagnosis/run.mjs --out FILE");
    if (arg === "--out") options.out = value();
    else if (arg === "--only") options.only = value().split(",");
    else if (arg === "--jobs") options.jobs = Number(value());
    else if (arg === "--keep") options.keep = true;
    else
      fail(
        `unknown argument ${arg}`,
        "node bench/diagnosis/run.mjs --out FILE [--only ID,...] [--jobs N] [--keep]",
      );
  }
  if (!options.out)
    fail("--out FILE is required", "node bench/diagnosis/run.mjs --out docs/reports/diagnosis-cpu.json");
  if (!Number.isInteger(options.jobs) || options.jobs < 1) fail("--jobs takes a whole number >= 1");
  return options;
}

/** Stops with a one-line reason when a part is missing; returns the Python side's versions. */
function checkPrerequisites() {
  if (!existsSync(CLI)) fail(`${CLI} is missing`, "npm run build");
  let python;
  try {
    python = sh(DEBIAN_PYTHON, [
      "-c",
      "import sys, venv, torch, numpy; print(sys.version.split()[0], 'torch', torch.__version__, 'numpy', numpy.__version__)",
    ]).trim();
  } catch {
    fail(
      `${DEBIAN_PYTHON} cannot import torch and venv`,
      "apt-get update && apt-get install -y python3-torch python3-venv",
    );
  }
  for (const tool of ["gcc", "nvcc"]) {
    try {
      sh(tool, ["--version"]);
    } catch {
      fail(
        `${tool} is not on PATH`,
        tool === "nvcc" ? "install the CUDA toolkit (nvcc 13.0 here)" : "apt-get install -y gcc",
      );
    }
  }
  return python;
}

/** Runs doctor; resolves with its exit code, stdout and stderr. */
function doctor(args, env, cwd) {
  return new Promise((done) => {
    const child = spawn(process.execPath, [CLI, "doctor", ...args], { env, cwd });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => (stdout += d));
    child.stderr.on("data", (d) => (stderr += d));
    child.on("close", (code) => done({ code, stdout, stderr }));
  });
}

function parseReport(result) {
  if (result.code !== 0 && result.code !== 1) {
    throw new Error(`doctor exit ${result.code}: ${result.stderr.trim().split("\n")[0] ?? ""}`);
  }
  return JSON.parse(result.stdout);
}

function kindOf(testCase) {
  return testCase.capture ? "capture" : testCase.gpu ? "local+gpu" : "local";
}

/** Builds one case's environment (synchronous: compilers and venvs) and returns how to diagnose it. */
function buildCase(testCase, ctx) {
  const started = performance.now();
  if (testCase.capture) {
    const path = join(ctx.work, `${testCase.id}.from.json`);
    writeFileSync(path, JSON.stringify(testCase.capture()));
    return { from: path, buildSeconds: (performance.now() - started) / 1000 };
  }
  const built = testCase.build(ctx);
  return { ...built, buildSeconds: (performance.now() - started) / 1000 };
}

async function diagnoseCase(testCase, built, ctx) {
  const started = performance.now();
  const baseEnv = Object.fromEntries(
    PASSED_ENV.filter((k) => process.env[k] !== undefined).map((k) => [k, process.env[k]]),
  );
  const env = { ...baseEnv, ...(built.env ?? {}) };
  let report;
  if (built.from) {
    report = parseReport(await doctor(["--from", built.from, "--json"], env, ctx.noProject));
  } else {
    const save = join(ctx.work, `${testCase.id}.facts.json`);
    const args = [
      "--python",
      built.python,
      "--project",
      built.project ?? ctx.noProject,
      "--json",
      ...(built.args ?? []),
    ];
    if (testCase.gpu) args.push("--save", save);
    if (testCase.fastLocal) args.push("--fast");
    report = parseReport(await doctor(args, env, ctx.noProject));
    if (testCase.gpu) {
      const local = JSON.parse(readFileSync(save, "utf8"));
      const grafted = onGpuHost(local, testCase.gpu);
      const from = join(ctx.work, `${testCase.id}.from.json`);
      writeFileSync(from, JSON.stringify(grafted));
      report = parseReport(await doctor(["--from", from, "--json"], baseEnv, ctx.noProject));
    }
  }
  return { report, seconds: (performance.now() - started) / 1000 };
}

async function pool(items, jobs, work) {
  const results = new Array(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const index = next++;
      results[index] = await work(items[index]);
    }
  };
  await Promise.all(Array.from({ length: Math.min(jobs, items.length) }, worker));
  return results;
}

async function main() {
  const started = performance.now();
  const options = parseArgs(process.argv.slice(2));
  const python = checkPrerequisites();
  const cases = options.only ? CASES.filter((c) => options.only.some((o) => c.id.includes(o))) : CASES;
  if (cases.length === 0) fail(`no case matches --only ${options.only.join(",")}`);
  const work = mkdtempSync(join(tmpdir(), "gpuprep-diagbench-"));
  const ctx = {
    work,
    noProject: join(work, "no-project"),
    sh,
    dir(name) {
      const path = join(work, name);
      mkdirSync(path, { recursive: true });
      return path;
    },
    project(name, files) {
      return writeProject(join(work, "projects", name), files);
    },
  };
  mkdirSync(ctx.noProject);
  ctx.shared = sharedEnvironments(ctx);

  const built = cases.map((testCase) => {
    try {
      return buildCase(testCase, ctx);
    } catch (error) {
      return {
        error: `build failed: ${
          String(error.stderr || error.message)
            .trim()
            .split("\n")
            .slice(-1)[0]
        }`,
      };
    }
  });
  const buildSeconds = (performance.now() - started) / 1000;
  const results = await pool(
    cases.map((testCase, i) => [testCase, built[i]]),
    options.jobs,
    async ([testCase, b]) => {
      const row = {
        id: testCase.id,
        catalog: testCase.catalog ?? null,
        expect: testCase.expect ?? null,
        minSeverity: testCase.expect ? (testCase.minSeverity ?? "warning") : null,
        accept: testCase.accept ?? [],
        kind: kindOf(testCase),
        how: testCase.how,
      };
      if (b.error)
        return {
          ...row,
          error: b.error,
          hit: testCase.expect ? false : null,
          top: false,
          findings: [],
          extras: [],
          falseAlarms: [],
        };
      try {
        const { report, seconds } = await diagnoseCase(testCase, b, ctx);
        const findings = report.findings.map((f) => ({ ruleId: f.ruleId, severity: f.severity }));
        return {
          ...row,
          ...scoreCase(testCase, findings),
          exitCode: report.summary.exitCode,
          findings,
          seconds: Number(seconds.toFixed(2)),
          buildSeconds: Number(b.buildSeconds.toFixed(2)),
        };
      } catch (error) {
        return {
          ...row,
          error: String(error.message),
          hit: testCase.expect ? false : null,
          top: false,
          findings: [],
          extras: [],
          falseAlarms: [],
        };
      }
    },
  );
  const summary = summarize(results);
  const durationSeconds = (performance.now() - started) / 1000;
  console.log(renderTable(results, summary));
  console.log(
    `\n${results.length} cases in ${durationSeconds.toFixed(1)} s (checks and builds ${buildSeconds.toFixed(1)} s, ${options.jobs} doctor runs at a time)`,
  );
  const document = {
    schema: SCHEMA,
    schemaVersion: SCHEMA_VERSION,
    tool: { name: "gpuprep", version: JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")).version },
    ranAt: new Date().toISOString(),
    machine: machine(python),
    command: `node bench/diagnosis/run.mjs ${process.argv.slice(2).join(" ")}`,
    durationSeconds: Number(durationSeconds.toFixed(1)),
    summary,
    cases: results,
  };
  const out = resolve(options.out);
  mkdirSync(dirname(out), { recursive: true });
  writeFileSync(out, JSON.stringify(document, null, 2) + "\n");
  console.log(`wrote ${out}`);
  if (options.keep) console.log(`environments kept in ${work}`);
  else rmSync(work, { recursive: true, force: true });
}

function machine(python) {
  const line = (cmd, args) => {
    try {
      return sh(cmd, args).trim().split("\n").slice(-1)[0];
    } catch {
      return null;
    }
  };
  return {
    cpus: Number(line("nproc", [])),
    python,
    loadAverageAtEnd: readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" "),
    nvcc: line("nvcc", ["--version"]),
    node: process.version,
    gitCommit: line("git", ["-C", ROOT, "rev-parse", "--short", "HEAD"]),
  };
}

await main();
