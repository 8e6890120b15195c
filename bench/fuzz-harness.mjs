// What the two mutation fuzzers (bench/fuzz-readers.mjs, bench/fuzz-snapshots.mjs) share: their
// command line, the per-input PRNG, the hang watchdog, CPU time, and how a thrown error is judged.
import { Worker } from "node:worker_threads";
import { UserError } from "../dist/src/errors.js";

/**
 * `[N=1000000] [SEED=1] [--only I] [--save PATH] [--until HH:MM]`: --until stops at that UTC time
 * (or after N inputs), and the report gives the exact count run.
 */
export function fuzzArguments(argv = process.argv.slice(2)) {
  const args = [...argv];
  const flag = (name) => {
    const at = args.indexOf(name);
    if (at < 0) return null;
    const value = args[at + 1];
    args.splice(at, 2);
    return value;
  };
  const only = flag("--only");
  const save = flag("--save");
  const until = flag("--until");
  const deadline =
    until === null ? Infinity : Date.parse(`${new Date().toISOString().slice(0, 11)}${until}:00Z`);
  return { only, save, deadline, N: Number(args[0] ?? 1_000_000), SEED: Number(args[1] ?? 1) >>> 0 || 1 };
}

/** mulberry32, re-seeded per input from (SEED, i): any input can be rebuilt alone. */
export function seededRandom(SEED) {
  let state = 1;
  const random = () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 2 ** 32;
  };
  const reseed = (i) => (state = (Math.imul(SEED, 0x9e3779b1) ^ Math.imul(i + 1, 0x85ebca6b)) >>> 0);
  const pick = (n) => Math.floor(random() * n);
  const choose = (list) => list[pick(list.length)];
  /** Like choose, but the later (costlier) entries of `list` come rarely: about 1 in 30 is the last. */
  const chooseSmall = (list) => list[Math.floor(random() ** 3 * list.length)];
  return { random, reseed, pick, choose, chooseSmall };
}

/**
 * A synchronous hang blocks this thread's timers, so another thread watches: store i + 1 in
 * `progress[0]` when input i starts; an input still running after `hangMs` of wall time is named.
 */
export function startWatchdog(hangMs) {
  const progress = new Int32Array(new SharedArrayBuffer(8));
  const watchdog = new Worker(
    `const { workerData } = require("node:worker_threads");
     const p = new Int32Array(workerData.buffer);
     let last = -1, since = Date.now(), told = false;
     setInterval(() => {
       const now = Atomics.load(p, 0);
       if (now !== last) { last = now; since = Date.now(); told = false; return; }
       if (!told && Date.now() - since > ${hangMs}) {
         told = true;
         process.stderr.write("HANG: input " + (now - 1) + " running for more than ${hangMs / 1000} s\\n");
       }
     }, 1000).unref();`,
    { eval: true, workerData: { buffer: progress.buffer } },
  );
  watchdog.unref();
  return progress;
}

/** CPU milliseconds (user + system) since `start`: the machine is shared, so wall time overstates. */
export const cpuMs = (start) => {
  const { user, system } = process.cpuUsage(start);
  return (user + system) / 1000;
};

// eslint-disable-next-line no-control-regex
export const UNPRINTABLE = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/;

/** Not gpuprep's UserError: a crash; a UserError must be one short printable line and hint. */
export function classify(error) {
  if (!(error instanceof UserError)) return "crash";
  if (UNPRINTABLE.test(error.message) || (error.hint !== null && UNPRINTABLE.test(error.hint)))
    return "bad-error (control character or newline)";
  if (error.message.length > 300) return "bad-error (longer than 300 characters)";
  return "user-error";
}
