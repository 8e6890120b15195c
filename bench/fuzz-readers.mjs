// Mutation fuzzing of the project readers: pyproject.toml, requirements*.txt (-r / -c includes,
// index options), uv.lock, pixi.toml and environment.yml. Seeds are the real project captures
// under test/fixtures/projects/ and the examples' project files. Each input is one seed project
// with one or two of its files mutated (byte flips, inserted / deleted / duplicated lines, splices
// between seeds, huge lines, deep TOML and YAML flow nesting, control characters, invalid UTF-8,
// truncation).
//
// Entry point: readProject(dir) from dist/src/gather/project.js, the function doctor and init call.
// It is the only entry point for pyproject.toml, requirements files and uv.lock (their parsers
// are private), and it applies the size and line caps that guard the TOML and YAML parsers, so
// pixi.toml and environment.yml go through it too rather than through parsePixiManifest /
// parseCondaEnvironment directly (those alone would "find" the superlinear inputs the caps exist
// to refuse). Each seed project lives in its own directory on /dev/shm (tmpfs); an input writes
// its mutated files there and puts the originals back afterwards.
//
// Per input: any exception that is not gpuprep's UserError is a crash; a UserError whose message
// or hint holds a newline or another control character, or whose message is longer than 300
// characters, is a bad error; an input taking over 10 s of CPU is a hang (CPU, not wall time: the
// machine is shared; a watchdog thread also names an input still running after 10 s of wall time). Input i is a pure function of (SEED, i), so
// `--only I` reproduces one input and `--save DIR` writes its files.
// Usage: node bench/fuzz-readers.mjs [N=1000000] [SEED=1] [--only I] [--save DIR]
import { mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { readProject } from "../dist/src/gather/project.js";
import { UserError } from "../dist/src/errors.js";
import { classify, cpuMs, fuzzArguments, seededRandom, startWatchdog } from "./fuzz-harness.mjs";

const { only, save: saveDir, deadline, N, SEED } = fuzzArguments();
const HANG_MS = 10_000;
/** Largest mutated file: twice the readers' 4 MiB manifest cap, so the cap itself is exercised. */
const MAX_INPUT = 8 * 1024 * 1024;

const { random, reseed, pick, choose, chooseSmall } = seededRandom(SEED);

// ------------------------------------------------------------------ seeds

const root = new URL("..", import.meta.url).pathname;
const MANIFEST = /^(pyproject\.toml|uv\.lock|pixi\.toml|environment\.ya?ml|requirements.*\.txt)$/;
function projectFiles(dir) {
  const files = {};
  for (const name of readdirSync(dir)) {
    const full = join(dir, name);
    if (MANIFEST.test(name)) files[name] = readFileSync(full);
    else if (name === "requirements" && statSync(full).isDirectory())
      for (const sub of readdirSync(full))
        if (sub.endsWith(".txt")) files[`requirements/${sub}`] = readFileSync(join(full, sub));
  }
  return files;
}
const projectDirs = [
  ...readdirSync(join(root, "test/fixtures/projects")).map((n) => join(root, "test/fixtures/projects", n)),
  ...readdirSync(join(root, "examples")).map((n) => join(root, "examples", n)),
].filter((d) => statSync(d).isDirectory());
const projects = projectDirs
  .map((dir) => ({ name: dir.split("/").slice(-2).join("-"), files: projectFiles(dir) }))
  .filter((p) => Object.keys(p.files).length > 0);
const kindOf = (name) =>
  name.endsWith(".txt") ? "requirements" : name.endsWith(".yml") || name.endsWith(".yaml") ? "yaml" : "toml";
/** Every seed file by kind, for splices and inserted lines. */
const pool = { requirements: [], yaml: [], toml: [] };
for (const p of projects) for (const [name, bytes] of Object.entries(p.files)) pool[kindOf(name)].push(bytes);
const seedLines = Object.fromEntries(
  Object.entries(pool).map(([kind, list]) => [
    kind,
    list.flatMap((b) => b.toString("utf8").split("\n")).filter((l) => l.trim() !== ""),
  ]),
);

/** Lines that reach the readers' special cases: includes, options, headers, anchors, wheels. */
const HOSTILE = {
  requirements: [
    "-r requirements/base.txt",
    "-r requirements.txt",
    "-c requirements/constraints.txt",
    "-r /proc/self/environ",
    "-c /etc/shadow",
    "-r ../../../../../etc/passwd",
    "-r .",
    "-r requirements",
    "-r",
    "-c",
    "--requirement=requirements/base.txt",
    "--index-url",
    "-i https://mirror.example/simple",
    "--extra-index-url=https://download.pytorch.org/whl/cu124",
    "-e .",
    "-e ./lib",
    "-e",
    "-e git+https://github.com/a/b@v1#egg=b",
    "git+https://github.com/a/b@v1#egg=",
    "torch==2.5.1 --hash=sha256:0123456789abcdef",
    "torch @ https://download.pytorch.org/whl/cu124/torch-2.5.1%2Bcu124-cp312-cp312-linux_x86_64.whl",
    "./dist/foo-1.0-py3-none-any.whl",
    "https://x/a-b-c-d-e.whl ; python_version < '3.13'",
    "https://x/-----.whl",
    "name[extra",
    "torch>=",
    "torch (>=2.4)",
    "torch ; python_version<'3.13'",
    "torch==2.5.1 \\",
    "\\",
    "# comment",
    "--pre",
    "--find-links ./wheels",
  ],
  toml: [
    "[project]",
    "[tool.uv]",
    "[[tool.uv.index]]",
    "[tool.uv.sources]",
    "[tool.pixi.dependencies]",
    "[tool.pixi.workspace]",
    "[dependency-groups]",
    "[project.optional-dependencies]",
    'name = "x"',
    "name = 1",
    "dependencies = [",
    "dependencies = 1",
    "dependencies = [1, {a = 2}]",
    "]",
    '"""',
    "'''",
    'x = """a',
    "a.b.c = 1",
    '"a.b" = 1',
    'pytorch = { version = ">=2", channel = "pytorch" }',
    "pytorch = 2",
    "[target.linux-64.dependencies]",
    "[feature.cuda.system-requirements]",
    "cuda = 12",
    "[environments]",
    'default = ["cuda"]',
    "default = { features = [1] }",
    "[pypi-dependencies]",
    'torch = { url = "x" }',
    'torch = { version = "not a version" }',
    "torch = { extras = [1, 2] }",
    'x = { path = "." }',
    "[[package]]",
    'source = { registry = "https://pypi.org/simple" }',
    "source = {}",
    "version = 1",
    "[[package]]\nname = 1",
    'torch = [{ index = "pytorch-cu124" }]',
    "x = 1979-05-27T07:32:00Z",
    "x = inf",
    "x = 0x_",
    "x = 99999999999999999999999",
    "[project]\n[project]",
    "project = 1",
    "tool = []",
    "[[tool.uv.index]]\nname = 1",
  ],
  yaml: [
    "name: x",
    "name: [",
    "channels:",
    "channels: 1",
    "  - conda-forge",
    "dependencies:",
    "dependencies: 1",
    "dependencies: {a: b}",
    "  - pip:",
    "    - torch==2.5.1",
    "    - --index-url https://x",
    "    - -r requirements.txt",
    "    - not a requirement!",
    "  - pytorch[version='>=2.4',build='*cuda*']",
    "  - conda-forge::pytorch=2.5.1=*cuda*",
    "  - ::",
    "  - =",
    "  - [1, 2]",
    "  - pip: 1",
    "- x",
    "&a [*a]",
    "a: &a [1]\nb: *a",
    "  - *undefined",
    "!!binary aGVsbG8=",
    "? complex",
    "---",
    "...",
    "<<: *a",
    "%YAML 1.2",
    "  - {a: [b, {c: d}]}",
    "key: |",
    "key: >-",
    "\t- tab",
    "'unterminated",
  ],
};

const CONTROL = ["\0", "\x1b[2J", "\x1b]0;pwned\x07", "\r", "\t", "\x7f", "\u2028", "\ufeff", "\x85", "\x08"];
const INVALID_UTF8 = [
  [0xff],
  [0xc3],
  [0xed, 0xa0, 0x80],
  [0xf4, 0x90, 0x80, 0x80],
  [0xe2, 0x82],
  [0xc0, 0xaf],
];
const HUGE_LENGTHS = [100, 1000, 4095, 4097, 20_000, 65_535, 65_537, 300_000];
const HUGE_UNITS = [
  "a",
  " ",
  "-",
  "=",
  "[",
  "]",
  '"',
  "#",
  ".",
  "\\",
  "a-",
  " #",
  "=a",
  "${",
  "[[",
  "{a=",
  "x ",
];

// ------------------------------------------------------------------ mutations

function nestTOML(depth) {
  return random() < 0.5
    ? `x = ${"[".repeat(depth)}${"]".repeat(depth)}`
    : `x = ${"{a=".repeat(depth)}1${"}".repeat(depth)}`;
}
function nestYAML(depth) {
  const open = random() < 0.5 ? "[" : "{a: ";
  const close = open === "[" ? "]" : "}";
  return `  - ${open.repeat(depth)}x${close.repeat(depth)}`;
}

function mutateText(bytes, kind) {
  const op = pick(12);
  if (op === 0) {
    // byte flips
    const out = Buffer.from(bytes);
    for (let n = 1 + pick(8); n > 0 && out.length > 0; n--) {
      const at = pick(out.length);
      out[at] = random() < 0.5 ? out[at] ^ (1 << pick(8)) : pick(256);
    }
    return out;
  }
  if (op === 1) return bytes.subarray(0, pick(bytes.length + 1)); // truncation
  if (op === 2) {
    // splice with another seed of the same kind (or any kind)
    const other = choose(random() < 0.8 ? pool[kind] : choose(Object.values(pool)));
    return Buffer.concat([bytes.subarray(0, pick(bytes.length + 1)), other.subarray(pick(other.length + 1))]);
  }
  if (op === 3) {
    // invalid UTF-8 somewhere
    const at = pick(bytes.length + 1);
    return Buffer.concat([bytes.subarray(0, at), Buffer.from(choose(INVALID_UTF8)), bytes.subarray(at)]);
  }
  const lines = bytes.toString("latin1").split("\n");
  const at = pick(lines.length + 1);
  const enc = (s) => Buffer.from(s, "utf8").toString("latin1");
  if (op === 4)
    lines.splice(at, 0, enc(choose(seedLines[kind]))); // insert a seed line
  else if (op === 5)
    lines.splice(at, 0, enc(choose(HOSTILE[kind]))); // insert a hostile line
  else if (op === 6)
    lines.splice(pick(lines.length), 1 + pick(3)); // delete lines
  else if (op === 7) {
    // duplicate a line, up to many times
    const line = lines[pick(lines.length)];
    // Capped at MAX_INPUT: stacked mutations (a 300 KB line copied 20,000 times) outgrow a string.
    const times = Math.min(
      chooseSmall([1, 2, 10, 100, 1000, 20_000]),
      Math.floor(MAX_INPUT / (line.length + 1)),
    );
    lines.splice(at, 0, ...Array(times).fill(line));
  } else if (op === 8) {
    // a huge line, bare or as a value
    const body = choose(HUGE_UNITS).repeat(Math.ceil(chooseSmall(HUGE_LENGTHS) / 2));
    const forms =
      kind === "toml"
        ? [body, `name = "${body}"`, `dependencies = ["${body}"]`, `x = ${body}`, `# ${body}`]
        : kind === "yaml"
          ? [body, `  - ${body}`, `name: ${body}`, `    - ${body}`]
          : [body, `torch${body}`, `-r ${body}`, `torch==1 ${body}`, `torch @ ${body}`];
    lines.splice(at, 0, enc(choose(forms)));
  } else if (op === 9) {
    // deep nesting
    const depth = chooseSmall([8, 33, 100, 1000, 5000, 30_000]);
    lines.splice(
      at,
      0,
      kind === "yaml" ? nestYAML(depth) : kind === "toml" ? nestTOML(depth) : "[".repeat(depth),
    );
  } else if (op === 10) {
    // control characters inside a line
    const index = pick(lines.length);
    const line = lines[index] ?? "";
    const cut = pick(line.length + 1);
    lines[index] = line.slice(0, cut) + enc(choose(CONTROL)) + line.slice(cut);
  } else {
    // swap two lines (reorders tables and keys)
    const a = pick(lines.length);
    const b = pick(lines.length);
    [lines[a], lines[b]] = [lines[b], lines[a]];
  }
  return Buffer.from(lines.join("\n"), "latin1");
}

/** Input i: which project, and its files with one or two of them mutated. */
function makeInput(i) {
  reseed(i);
  const project = projects[i % projects.length];
  const names = Object.keys(project.files);
  const targets = new Set([choose(names)]);
  if (random() < 0.15) targets.add(choose(names));
  const changed = {};
  for (const name of targets) {
    let bytes = project.files[name];
    for (let n = random() < 0.7 ? 1 : 2 + pick(3); n > 0; n--) {
      bytes = mutateText(bytes, kindOf(name));
      if (bytes.length > MAX_INPUT) bytes = bytes.subarray(0, MAX_INPUT);
    }
    changed[name] = bytes;
  }
  return { project, changed };
}

// ------------------------------------------------------------------ running

const work = `/dev/shm/gpuprep-fuzz-readers-${process.pid}`;
rmSync(work, { recursive: true, force: true });
function dirOf(project) {
  return join(work, project.name);
}
for (const project of projects)
  for (const [name, bytes] of Object.entries(project.files)) {
    const path = join(dirOf(project), name);
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, bytes);
  }
process.on("exit", () => rmSync(work, { recursive: true, force: true }));

const progress = startWatchdog(HANG_MS);

function runOne(i) {
  const { project, changed } = makeInput(i);
  const dir = dirOf(project);
  for (const [name, bytes] of Object.entries(changed)) writeFileSync(join(dir, name), bytes);
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  let outcome = "ok";
  let error = null;
  try {
    readProject(dir);
  } catch (caught) {
    error = caught;
    outcome = classify(caught);
  }
  const took = performance.now() - t0;
  const cpu = cpuMs(c0);
  for (const name of Object.keys(changed)) writeFileSync(join(dir, name), project.files[name]);
  return { project, changed, outcome, error, took, cpu };
}

if (only !== null) {
  const i = Number(only);
  const { project, changed, outcome, error, took, cpu } = runOne(i);
  console.log(`input ${i}: project ${project.name}, mutated ${Object.keys(changed).join(", ")}`);
  console.log(`${outcome} in ${took.toFixed(1)} ms (${cpu.toFixed(1)} ms of CPU)`);
  if (error)
    console.log(error instanceof UserError ? JSON.stringify([error.message, error.hint]) : error.stack);
  if (saveDir) {
    for (const [name, bytes] of Object.entries({ ...project.files, ...changed })) {
      mkdirSync(dirname(join(saveDir, name)), { recursive: true });
      writeFileSync(join(saveDir, name), bytes);
    }
    console.log(`files written to ${saveDir}`);
  }
  process.exit(0);
}

const started = performance.now();
const outcomes = {};
const failures = [];
let slowest = { cpu: 0, took: 0, i: -1, project: "", files: "" };
let slowestWall = 0;
let count = 0;
for (let i = 0; i < N; i++) {
  if (i % 1000 === 0 && Date.now() > deadline) break;
  count = i + 1;
  Atomics.store(progress, 0, i + 1);
  const { project, changed, outcome, error, took, cpu } = runOne(i);
  outcomes[outcome] = (outcomes[outcome] ?? 0) + 1;
  slowestWall = Math.max(slowestWall, took);
  if (cpu > slowest.cpu)
    slowest = { cpu, took, i, project: project.name, files: Object.keys(changed).join(",") };
  const failed = outcome === "crash" || outcome.startsWith("bad-error") || cpu > HANG_MS;
  if (failed) {
    failures.push(i);
    if (failures.length <= 20) {
      const detail =
        error instanceof UserError
          ? JSON.stringify([error.message.slice(0, 400), error.hint])
          : (error?.stack ?? "").split("\n").slice(0, 4).join(" | ");
      console.error(
        `input ${i} (${project.name}: ${Object.keys(changed).join(",")}): ${outcome} in ${took.toFixed(0)} ms (${cpu.toFixed(0)} ms CPU): ${detail}`,
      );
    }
  }
  if ((i + 1) % 50_000 === 0)
    console.log(
      `  ${i + 1} inputs, ${((i + 1) / ((performance.now() - started) / 1000)).toFixed(0)}/s, ` +
        `slowest ${slowest.cpu.toFixed(0)} ms CPU (input ${slowest.i}), failures ${failures.length}`,
    );
}
const seconds = (performance.now() - started) / 1000;
const verdict =
  failures.length === 0
    ? "no crash, no multi-line or unsanitized error, no hang"
    : `${failures.length} FAILED inputs (first: ${failures.slice(0, 10).join(", ")})`;
console.log(
  `${count} mutated inputs from ${projects.length} seed projects (seed ${SEED}) in ${seconds.toFixed(1)} s ` +
    `(${(count / seconds).toFixed(0)}/s): ${verdict} (slowest ${slowest.cpu.toFixed(1)} ms of CPU, ${slowest.took.toFixed(1)} ms wall: input ${slowest.i}, ` +
    `${slowest.project} ${slowest.files}; slowest wall ${slowestWall.toFixed(1)} ms); outcomes ${JSON.stringify(outcomes)}`,
);
process.exit(failures.length === 0 ? 0 : 1);
