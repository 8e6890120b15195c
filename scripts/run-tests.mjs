// Runs the compiled *.test.js files under dist/, each in its own node process, a few at a time.
//
//   node scripts/run-tests.mjs [--build] [--lint] [--e2e | --all] [--jobs N] [FILTER]
//
// Without --e2e or --all it runs every test file but the end-to-end ones (E2E below: a real Slurm
// cluster, sshd, the Kubernetes stand-in, Docker engines, npm pack and a global install, the fuzz
// and differential runs, the sweeps through the CLI), which take minutes of waiting or computing
// and are run by `npm run test:e2e`; --all runs both (`npm run test:all`, what .ci/run runs).
//
// --build runs `npm run build` first where anything it reads is newer than its last run from here
// (dist/.build-stamp), and skips it where dist/ is current. --lint runs `npm run lint` from the
// start, beside the build and then the tests, so the type-aware ESLint pass (one core for about a
// minute) overlaps them instead of running before them.
//
// Its own pool rather than `node --test --test-concurrency`: it knows each file's wall time, so
// it starts the slowest first (from dist/.test-times.json, written at the end of each run; a
// clean dist/ starts the end-to-end files first, then the rest in name order) and ends with the
// slowest files. Each file's output is printed whole when it ends, so concurrent files never
// interleave. GPUPREP_TEST_JOBS sets how many run at once (nproc + 1 unless set).
import {
  existsSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  rmSync,
  statSync,
  utimesSync,
  writeFileSync,
} from "node:fs";
import { availableParallelism, tmpdir } from "node:os";
import { join } from "node:path";
import { spawn } from "node:child_process";
import { parseArgs } from "node:util";

/**
 * The end-to-end files: real daemons, clusters and packaging, mostly waiting (slurm-admin.test.js
 * alone waits minutes for nodes to go down and come back). Each entry is a path prefix under dist/
 * and must match at least one file, so a renamed test cannot drop out of `npm run test:e2e`.
 */
const E2E = [
  "dist/test/e2e/", // Docker engine and registry (test/e2e/*.sh; on CI or GPUPREP_DOCKER_E2E=1)
  "dist/test/init/docker-e2e.test.js", // init's Dockerfile built and run in a Docker engine
  "dist/test/fleet/slurm.test.js", // a real Slurm: slurmctld and 7 slurmd
  "dist/test/fleet/slurm-64.test.js", // 64 slurmd
  "dist/test/fleet/slurm-admin.test.js", // drained, crashed and reserved nodes of a real Slurm
  "dist/test/fleet/hosts.test.js", // a real sshd on loopback through ssh, pdsh and clush
  "dist/test/fleet/kube.test.js", // the Kubernetes API stand-in, a real probe per pod
  "dist/test/package.test.js", // npm pack through its lifecycle and a global install
  "dist/test/remote/fuzz-smoke.test.js", // 500 mutated inputs for each of 8 readers
  "dist/src/util/pep440-differential.test.js", // 125,000 generated pairs against Python's packaging
  "dist/test/memory/cli.test.js", // memory --measure's search: 30 real trial processes, one hung and killed at 15 s
  "dist/test/cli/kb-not-sourced.test.js", // every kind of KB row and every torch release through the CLI (70 runs)
];

const TIMES_FILE = join("dist", ".test-times.json");
const BUILD_STAMP = join("dist", ".build-stamp");
const LINT_JOB = "npm run lint";
const BUILD_JOB = "npm run build";
/** What `npm run build` reads: tsconfig.json's TypeScript, src/'s assets (scripts/copy-assets.mjs), their configs. */
const BUILD_INPUTS = [
  "src",
  "test",
  "bench",
  "tsconfig.json",
  "package.json",
  "scripts/copy-assets.mjs",
  "scripts/inline-python.mjs",
];

/** The newest modification time among the build's inputs (src/ whole; .ts files elsewhere; test/fixtures/ skipped). */
function newestInput(path, top = path) {
  const stat = statSync(path, { throwIfNoEntry: false });
  if (!stat) return 0;
  if (!stat.isDirectory())
    return top === "src" || !/^(src|test|bench)$/.test(top) || /\.m?ts$/.test(path) ? stat.mtimeMs : 0;
  if (path === join("test", "fixtures")) return 0;
  return Math.max(stat.mtimeMs, ...readdirSync(path).map((name) => newestInput(join(path, name), top)));
}

function buildIsCurrent() {
  const stamp = statSync(BUILD_STAMP, { throwIfNoEntry: false });
  return stamp !== undefined && BUILD_INPUTS.every((input) => newestInput(input) <= stamp.mtimeMs);
}

/** `npm run build` unless dist/ is current; the stamp takes the time the build started, so an edit made during it counts. */
async function buildIfStale(env) {
  if (buildIsCurrent()) {
    console.log(`── build skipped: nothing it reads changed since its last run here (${BUILD_STAMP})`);
    return true;
  }
  const started = new Date();
  const result = await runJob(BUILD_JOB, env);
  report(result);
  if (result.code !== 0) return false;
  writeFileSync(BUILD_STAMP, "");
  utimesSync(BUILD_STAMP, started, started);
  return true;
}

function findTests(dir, out = []) {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) findTests(path, out);
    else if (name.endsWith(".test.js")) out.push(path);
  }
  return out;
}

const isE2e = (file) => E2E.some((prefix) => file.startsWith(prefix));

/** A FILTER (a part of the path) picks from both groups: naming a file runs it. */
function selectFiles(all, { e2e, everything, filter }) {
  const stale = E2E.filter((prefix) => !all.some((file) => file.startsWith(prefix)));
  if (stale.length)
    throw new Error(`scripts/run-tests.mjs: E2E entries match no test file: ${stale.join(", ")}`);
  if (filter) return all.filter((file) => file.includes(filter) && (!e2e || isE2e(file)));
  return all.filter((file) => everything || isE2e(file) === e2e);
}

function readTimes() {
  try {
    return JSON.parse(readFileSync(TIMES_FILE, "utf8"));
  } catch {
    return {};
  }
}

/** Slowest first by the last run's wall times; files never timed go first, end-to-end ones before the rest. */
function order(jobs, times) {
  const rank = (job) => times[job] ?? (isE2e(job) ? Infinity : Number.MAX_VALUE);
  return [...jobs].sort((a, b) => rank(b) - rank(a) || a.localeCompare(b));
}

/** The counts node's spec reporter prints at the end of a file ("ℹ pass 12"). */
function counts(output) {
  const count = (key) => Number(output.match(new RegExp(`^ℹ ${key} (\\d+)$`, "m"))?.[1] ?? 0);
  return {
    pass: count("pass"),
    fail: count("fail"),
    skipped: count("skipped"),
    todo: count("todo"),
    cancelled: count("cancelled"),
  };
}

function runJob(job, env) {
  const [command, args] = job.startsWith("npm run ")
    ? ["npm", ["run", "--silent", job.slice("npm run ".length)]]
    : [process.execPath, ["--test-reporter=spec", job]];
  const started = performance.now();
  return new Promise((resolve) => {
    const child = spawn(command, args, { env, stdio: ["ignore", "pipe", "pipe"] });
    const chunks = [];
    child.stdout.on("data", (chunk) => chunks.push(chunk));
    child.stderr.on("data", (chunk) => chunks.push(chunk));
    child.on("close", (code, signal) => {
      const output = Buffer.concat(chunks).toString("utf8");
      resolve({ job, code: code ?? 1, signal, output, seconds: (performance.now() - started) / 1000 });
    });
  });
}

function report(result) {
  const mark = result.code === 0 ? "✔" : "✖";
  const c = counts(result.output);
  const tally = result.job.startsWith("npm run ")
    ? ""
    : ` (${c.pass} pass, ${c.fail} fail, ${c.skipped} skipped)`;
  console.log(`\n── ${mark} ${result.job}  ${result.seconds.toFixed(1)} s${tally}`);
  process.stdout.write(result.output.endsWith("\n") || !result.output ? result.output : `${result.output}\n`);
  if (result.signal) console.log(`(ended by ${result.signal})`);
}

function summary(results, seconds, jobs) {
  const tests = results.filter((r) => !r.job.startsWith("npm run "));
  const total = { pass: 0, fail: 0, skipped: 0, todo: 0, cancelled: 0 };
  for (const r of tests) for (const [key, n] of Object.entries(counts(r.output))) total[key] += n;
  const failed = results.filter((r) => r.code !== 0);
  console.log(`\n══ ${tests.length} test files, ${jobs} at a time, ${seconds.toFixed(1)} s`);
  console.log(
    `   tests: ${total.pass} pass, ${total.fail} fail, ${total.skipped} skipped, ${total.todo} todo, ${total.cancelled} cancelled`,
  );
  console.log("   slowest:");
  for (const r of [...results].sort((a, b) => b.seconds - a.seconds).slice(0, 10))
    console.log(`     ${r.seconds.toFixed(1).padStart(6)} s  ${r.job}`);
  if (failed.length)
    console.log(`   FAILED (${failed.length}):\n${failed.map((r) => `     ${r.job}`).join("\n")}`);
}

function saveTimes(results) {
  const times = { ...readTimes() };
  for (const r of results) times[r.job] = Math.round(r.seconds * 10) / 10;
  if (existsSync("dist")) writeFileSync(TIMES_FILE, `${JSON.stringify(times, null, 1)}\n`);
}

/** `width` workers over the files; a job already running (the lint) holds one of them until it ends. */
async function runPool(files, width, env, running) {
  const queue = [...files];
  const results = [];
  const finish = (result) => {
    report(result);
    results.push(result);
  };
  const worker = async (first) => {
    if (first) finish(await first);
    for (let job = queue.shift(); job; job = queue.shift()) finish(await runJob(job, env));
  };
  const workers = Array.from({ length: Math.max(1, Math.min(width, files.length)) }, (_, i) =>
    worker(i === 0 ? running : null),
  );
  await Promise.all(workers);
  return results;
}

async function main() {
  const { values, positionals } = parseArgs({
    options: {
      build: { type: "boolean", default: false },
      lint: { type: "boolean", default: false },
      e2e: { type: "boolean", default: false },
      all: { type: "boolean", default: false },
      jobs: { type: "string" },
    },
    allowPositionals: true,
  });
  const width =
    Number(values.jobs ?? process.env["GPUPREP_TEST_JOBS"] ?? 0) || Math.max(2, availableParallelism() + 1);
  // Every temp dir the tests (and the Pythons they start) make goes under one directory of this run,
  // removed at the end: a test that forgets its own leaves nothing behind in /tmp.
  const runTmp = mkdtempSync(join(tmpdir(), "gpuprep-test-run-"));
  const env = { ...process.env, TMPDIR: runTmp };
  const started = performance.now();
  const lint = values.lint ? runJob(LINT_JOB, env) : null;
  const built = values.build ? await buildIfStale(env) : existsSync("dist");
  let files = [];
  if (built) {
    files = selectFiles(findTests("dist"), {
      e2e: values.e2e,
      everything: values.all,
      filter: positionals[0],
    });
    if (files.length === 0) throw new Error("no test files found under dist/ (did the build run?)");
  } else if (!values.build) console.error("no dist/ (run `npm run build` first)");
  const results = await runPool(order(files, readTimes()), width, env, lint);
  summary(results, (performance.now() - started) / 1000, width);
  saveTimes(results);
  if (process.env["GPUPREP_KEEP_TEST_TMP"]) console.error(`test temp files kept in ${runTmp}`);
  else rmSync(runTmp, { recursive: true, force: true });
  return built && results.every((r) => r.code === 0) ? 0 : 1;
}

main().then(
  (code) => process.exit(code),
  (error) => {
    console.error(error instanceof Error ? error.message : error);
    process.exit(1);
  },
);
