// Mutation fuzzing of facts snapshots (`doctor --from FILE`, `init --from FILE`). Seeds are the real
// captures under test/fixtures/facts/. Each input is one seed with JSON-aware mutations (a value's
// type changed, a key dropped or added, huge strings, control characters and terminal escapes,
// deep nesting, numbers at extremes, subtrees spliced in from another capture, array items
// repeated) and, for some, raw byte mutations of the text (flips, truncation, invalid UTF-8).
//
// Entry points, in memory (what `--from` runs after reading the file): parseFacts (src/facts/io.ts);
// for a snapshot that parses, doctor's diagnose with the bundled KB, renderText (no colour) and
// renderJson; then init's targetFromFacts, makePlan (for one of the real fixture projects, read
// once with readProject) and generateFiles.
//
// Per input: any exception that is not gpuprep's UserError is a crash; a UserError whose message
// or hint holds a newline or another control character, or whose message is longer than 300
// characters, is a bad error; an input taking over 10 s of CPU is a hang (CPU, not wall time: the
// machine is shared; a watchdog thread also names an input still running after 10 s of wall time). Also counted as failures: a terminal escape or other control
// character (beyond newline and tab) in doctor's text output or in a generated file, and a GPU name
// with a newline copied verbatim into a generated file (a line injected into a script).
// Input i is a pure function of (SEED, i): `--only I` reproduces one input, `--save FILE` writes it.
// Usage: node bench/fuzz-snapshots.mjs [N=1000000] [SEED=1] [--until HH:MM] [--only I] [--save FILE]
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { parseFacts } from "../dist/src/facts/io.js";
import { loadKnowledgeBase } from "../dist/src/kb/index.js";
import { diagnose } from "../dist/src/diagnose/diagnose.js";
import { renderText } from "../dist/src/report/text.js";
import { renderJson } from "../dist/src/report/json.js";
import { makeStyle } from "../dist/src/report/style.js";
import { targetFromFacts } from "../dist/src/plan/target.js";
import { makePlan } from "../dist/src/plan/index.js";
import { generateFiles } from "../dist/src/generate/index.js";
import { readProject } from "../dist/src/gather/project.js";
import { UserError } from "../dist/src/errors.js";
import { classify, cpuMs, fuzzArguments, seededRandom, startWatchdog } from "./fuzz-harness.mjs";
import { initOptions } from "../dist/test/support/init-options.js";

const { only, save: saveFile, deadline, N, SEED } = fuzzArguments();
const HANG_MS = 10_000;

const { random, reseed, pick, choose, chooseSmall } = seededRandom(SEED);

// ------------------------------------------------------------------ seeds

const root = new URL("..", import.meta.url).pathname;
const factsDir = join(root, "test/fixtures/facts");
const seeds = readdirSync(factsDir)
  .filter((n) => n.endsWith(".json"))
  .sort()
  .map((name) => ({ name, value: JSON.parse(readFileSync(join(factsDir, name), "utf8")) }));
const projectsDir = join(root, "test/fixtures/projects");
const projects = readdirSync(projectsDir)
  .sort()
  .map((n) => {
    const project = readProject(join(projectsDir, n));
    const pyproject = project.pyproject ? readFileSync(project.pyproject.path, "utf8") : null;
    return { project, pyproject };
  });
const kb = loadKnowledgeBase();
const style = makeStyle(false);
const OPTIONS = initOptions();

// ------------------------------------------------------------------ mutations

const ESCAPES = [
  "\n",
  "\r",
  "\nRUN touch /tmp/x\n",
  "\x1b[2J",
  "\x1b]0;pwned\x07",
  "\x1b[31m",
  "\0",
  "\u2028",
  "\u0085",
  "\t",
  "\x7f",
  "$(touch /tmp/y)",
  '"; rm -rf ~; "',
  "\ud800",
];
const SCALARS = [null, true, false, 0, -1, 1, 1.5, "", "x", "9.0", "12.4", "ok", [], {}, [null], { a: 1 }];
const NUMBERS = [1e308, -1e308, 2 ** 53 + 2, -(2 ** 53) - 2, 5e-324, -0, 0.1, 4294967296, -2147483649];
/** Text spliced in after stringify: numbers JSON can write but JS cannot hold, and deep nesting. */
const RAW_NUMBERS = ["1e999", "-1e999", "1" + "0".repeat(400), "-0.0e-0", "0.0000000000000000000000001"];
const PLACEHOLDER = "\u0001FUZZ\u0001";
const INVALID_UTF8 = [[0xff], [0xc3], [0xed, 0xa0, 0x80], [0xf4, 0x90, 0x80, 0x80], [0xc0, 0xaf]];

const isContainer = (v) => typeof v === "object" && v !== null;
const shallowCopy = (v) => (Array.isArray(v) ? [...v] : { ...v });

/** A random subtree of any seed (for splices). */
function randomSubtree() {
  let node = choose(seeds).value;
  for (let depth = 0; isContainer(node) && depth < 8; depth++) {
    const keys = Object.keys(node);
    if (keys.length === 0 || random() < 0.25) break;
    node = node[choose(keys)];
  }
  return node;
}

/**
 * One mutation of `doc` (never modified): walks to a random node, copying only the containers on
 * the way, and changes, drops or adds a value there. Returns the new document and the raw text
 * (if any) that replaces PLACEHOLDER after stringify.
 */
function mutateJson(doc, raws) {
  const top = shallowCopy(doc);
  let parent = top;
  let key = choose(Object.keys(top));
  for (let depth = 0; depth < 12; depth++) {
    const child = parent[key];
    if (!isContainer(child) || Object.keys(child).length === 0 || random() < 0.2) break;
    const copy = shallowCopy(child);
    parent[key] = copy;
    parent = copy;
    key = choose(Object.keys(copy));
  }
  const value = parent[key];
  const op = pick(10);
  const set = (v) => (parent[key] = v);
  if (op === 0) set(choose(SCALARS));
  else if (op === 1) {
    if (Array.isArray(parent)) parent.splice(Number(key), 1);
    else delete parent[key];
  } else if (op === 2) {
    const target = isContainer(value) && !Array.isArray(value) ? shallowCopy(value) : parent;
    if (target === parent && Array.isArray(parent)) parent.push(choose(SCALARS));
    else target[choose(["extra", "__proto__", "constructor", "toString", "", "0"])] = choose(SCALARS);
    if (target !== parent) set(target);
  } else if (op === 3) {
    const unit = choose(["a", "é", " ", "\n", "x\x1b[2J", "𝔘", "-"]);
    set(unit.repeat(chooseSmall([10, 300, 3000, 100_000, 2_000_000])));
  } else if (op === 4) {
    const escape = choose(ESCAPES);
    if (typeof value === "string") {
      const at = pick(value.length + 1);
      set(value.slice(0, at) + escape + value.slice(at));
    } else set(`x${escape}y`);
  } else if (op === 5) {
    const depth = chooseSmall([10, 100, 1000, 10_000, 100_000]);
    const [open, close] = random() < 0.5 ? ["[", "]"] : ['{"a":', "}"];
    raws.push(open.repeat(depth) + "1" + close.repeat(depth));
    set(PLACEHOLDER);
  } else if (op === 6) {
    if (random() < 0.5) set(choose(NUMBERS));
    else {
      raws.push(choose(RAW_NUMBERS));
      set(PLACEHOLDER);
    }
  } else if (op === 7) set(randomSubtree());
  else if (op === 8 && Array.isArray(value) && value.length > 0) {
    const item = choose(value);
    set([...value, ...Array(chooseSmall([1, 10, 100, 1000, 10_000])).fill(item)]);
  } else if (typeof value === "number") set(value + choose([-1, 1, 0.5, 1e9]));
  else if (typeof value === "string") set(value.slice(0, pick(value.length + 1)));
  else set(choose(SCALARS));
  return top;
}

function mutateBytes(text) {
  let bytes = Buffer.from(text, "utf8");
  const op = pick(4);
  if (op === 0) {
    for (let n = 1 + pick(8); n > 0; n--) {
      const at = pick(bytes.length);
      bytes[at] = random() < 0.5 ? bytes[at] ^ (1 << pick(8)) : pick(256);
    }
  } else if (op === 1) bytes = bytes.subarray(0, pick(bytes.length + 1));
  else if (op === 2) {
    const at = pick(bytes.length + 1);
    bytes = Buffer.concat([bytes.subarray(0, at), Buffer.from(choose(INVALID_UTF8)), bytes.subarray(at)]);
  } else {
    // a control character or escape inside the text (lands in a string, or breaks the JSON)
    const at = pick(bytes.length + 1);
    bytes = Buffer.concat([bytes.subarray(0, at), Buffer.from(choose(ESCAPES)), bytes.subarray(at)]);
  }
  // As readTextFile decodes a file: invalid UTF-8 becomes U+FFFD.
  return bytes.toString("utf8");
}

function makeInput(i) {
  reseed(i);
  const seed = seeds[i % seeds.length];
  let doc = seed.value;
  const raws = [];
  const edits = random() < 0.85 ? (random() < 0.7 ? 1 : 2 + pick(3)) : 0;
  for (let n = 0; n < edits; n++) doc = mutateJson(doc, raws);
  let text = JSON.stringify(doc, null, random() < 0.5 ? 1 : undefined);
  for (const raw of raws) text = text.replace(JSON.stringify(PLACEHOLDER), raw);
  if (edits === 0 || random() < 0.2) text = mutateBytes(text);
  return { seed: seed.name, text, project: projects[pick(projects.length)] };
}

// ------------------------------------------------------------------ running

const progress = startWatchdog(HANG_MS);

/** Control characters a text report or generated file may not hold (newline and tab are layout). */
// eslint-disable-next-line no-control-regex
const RAW_CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u2028\u2029]/;

/** Runs one snapshot the way doctor --from and init --from do; returns the outcome. */
function pipeline(text, project) {
  const facts = parseFacts(text, "fuzz.json");
  const findings = diagnose(facts, kb);
  const report = renderText(facts, findings, style);
  if (RAW_CONTROL.test(report)) return "control character in doctor's text output";
  renderJson(facts, findings, findings.length > 0 ? 1 : 0);
  const target = targetFromFacts(kb, facts, "fuzz.json");
  const plan = makePlan(kb, project.project, target, OPTIONS);
  const { files } = generateFiles(plan, { pyproject: project.pyproject, pixi: null });
  for (const file of files) {
    if (RAW_CONTROL.test(file.content)) return `control character in generated ${file.path}`;
    if (/[\n\r]/.test(target.gpuName) && file.content.includes(target.gpuName))
      return `GPU name with a newline copied into generated ${file.path}`;
  }
  return "ok";
}

function runOne(i) {
  const input = makeInput(i);
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  let outcome;
  let error = null;
  try {
    outcome = pipeline(input.text, input.project);
  } catch (caught) {
    error = caught;
    outcome = classify(caught);
  }
  return { ...input, outcome, error, took: performance.now() - t0, cpu: cpuMs(c0) };
}

const failedOutcome = (outcome, cpu) => !(outcome === "ok" || outcome === "user-error") || cpu > HANG_MS;

if (only !== null) {
  const i = Number(only);
  const { seed, text, project, outcome, error, took, cpu } = runOne(i);
  console.log(`input ${i}: seed ${seed}, ${text.length} characters, project ${project.project.dir}`);
  console.log(`${outcome} in ${took.toFixed(1)} ms (${cpu.toFixed(1)} ms of CPU)`);
  if (error)
    console.log(error instanceof UserError ? JSON.stringify([error.message, error.hint]) : error.stack);
  if (saveFile) {
    writeFileSync(saveFile, text);
    console.log(`snapshot written to ${saveFile}`);
  }
  process.exit(0);
}

const started = performance.now();
const outcomes = {};
const failures = [];
let count = 0;
let slowest = { cpu: 0, took: 0, i: -1, seed: "" };
let slowestWall = 0;
for (let i = 0; i < N; i++) {
  if (i % 1000 === 0 && Date.now() > deadline) break;
  count = i + 1;
  Atomics.store(progress, 0, i + 1);
  const { seed, outcome, error, took, cpu } = runOne(i);
  outcomes[outcome] = (outcomes[outcome] ?? 0) + 1;
  slowestWall = Math.max(slowestWall, took);
  if (cpu > slowest.cpu) slowest = { cpu, took, i, seed };
  if (failedOutcome(outcome, cpu)) {
    failures.push(i);
    if (failures.length <= 20) {
      const detail =
        error instanceof UserError
          ? JSON.stringify([error.message.slice(0, 400), error.hint])
          : (error?.stack ?? "").split("\n").slice(0, 4).join(" | ");
      console.error(
        `input ${i} (${seed}): ${outcome} in ${took.toFixed(0)} ms (${cpu.toFixed(0)} ms CPU): ${detail}`,
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
    ? "no crash, no multi-line or unsanitized error, no raw control character in output, no hang"
    : `${failures.length} FAILED inputs (first: ${failures.slice(0, 10).join(", ")})`;
console.log(
  `${count} mutated snapshots from ${seeds.length} captures (seed ${SEED}) in ${seconds.toFixed(1)} s ` +
    `(${(count / seconds).toFixed(0)}/s): ${verdict} (slowest ${slowest.cpu.toFixed(1)} ms of CPU, ${slowest.took.toFixed(1)} ms wall: input ${slowest.i}, ` +
    `${slowest.seed}; slowest wall ${slowestWall.toFixed(1)} ms); outcomes ${JSON.stringify(outcomes)}`,
);
process.exit(failures.length === 0 ? 0 : 1);
