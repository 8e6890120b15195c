/**
 * Runs one batch of the differential: the questions go to bench/pep440_reference.py (one Python
 * process per batch, JSON lines in and out) while src/util answers them here; then every pair of
 * answers is compared. Shared by src/util/pep440-differential.test.ts and
 * bench/pep440-differential.mjs.
 */
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { type Request, acceptedRaise, answer } from "./pep440-corpus.js";

/** bench/pep440_reference.py in the source tree (the compiled bench sits in dist/bench/). */
export const REFERENCE_SCRIPT = fileURLToPath(new URL("../../bench/pep440_reference.py", import.meta.url));

export interface Mismatch {
  request: Request;
  mine: unknown;
  packaging: unknown;
}

export interface BatchResult {
  packagingVersion: string;
  /** Questions compared, by kind (c, o, v, ...), "skip" answers left out. */
  compared: Record<string, number>;
  mismatches: Mismatch[];
  /** Answers where packaging 23.0 raised in hash order and the answer here was accepted (see packagingMayRaise). */
  acceptedRaises: number;
  /** Time src/util took to answer, and the wall time of the whole batch. */
  mineMs: number;
  wallMs: number;
}

function runReference(python: string, input: string): Promise<string[]> {
  return new Promise((resolve, reject) => {
    const child = spawn(python, ["-s", REFERENCE_SCRIPT], {
      // PYTHONHASHSEED: packaging's sets iterate in hash order; a fixed seed makes a run repeatable.
      env: { ...process.env, PYTHONHASHSEED: "0", PYTHONIOENCODING: "utf-8" },
      stdio: ["pipe", "pipe", "pipe"],
    });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on("data", (chunk: Buffer) => out.push(chunk));
    child.stderr.on("data", (chunk: Buffer) => err.push(chunk));
    child.on("error", reject);
    child.on("close", (code) => {
      if (code !== 0)
        reject(new Error(`${python} ${REFERENCE_SCRIPT} exited ${code}: ${Buffer.concat(err).toString()}`));
      else resolve(Buffer.concat(out).toString("utf8").split("\n"));
    });
    child.stdin.end(input);
  });
}

/**
 * packaging's answers to `requests`, from `processes` Python processes at once (each given a
 * contiguous slice, so the texts one family of pairs shares are parsed once): the first line is
 * packaging's version, then one answer per request.
 */
export async function referenceAnswers(
  python: string,
  requests: readonly Request[],
  processes: number,
): Promise<string[]> {
  const size = Math.ceil(requests.length / processes);
  const slices = Array.from({ length: processes }, (_, i) => requests.slice(i * size, (i + 1) * size));
  const outputs = await Promise.all(
    slices.map((slice) => runReference(python, slice.map((r) => JSON.stringify(r)).join("\n") + "\n")),
  );
  // Each output is [version, ...answers, ""] (the last line ends with a newline).
  return [outputs[0]?.[0] ?? "null", ...outputs.flatMap((lines) => lines.slice(1, -1))];
}

/** Asks both sides every question of `requests` and compares the answers. */
export async function runBatch(
  python: string,
  requests: readonly Request[],
  processes = 1,
): Promise<BatchResult> {
  const started = performance.now();
  const reference = referenceAnswers(python, requests, processes);
  const mineStarted = performance.now();
  const mine = requests.map(answer);
  const mineMs = performance.now() - mineStarted;
  const lines = await reference;
  if (lines.length !== requests.length + 1)
    throw new Error(`${REFERENCE_SCRIPT} gave ${lines.length - 1} answers to ${requests.length} questions`);
  const result: BatchResult = {
    packagingVersion: JSON.parse(lines[0] as string) as string,
    compared: {},
    mismatches: [],
    acceptedRaises: 0,
    mineMs,
    wallMs: 0,
  };
  requests.forEach((request, i) => {
    const theirs: unknown = JSON.parse(lines[i + 1] as string);
    if (mine[i] === "skip" && theirs === "skip") return;
    result.compared[request.k] = (result.compared[request.k] ?? 0) + 1;
    if (JSON.stringify(mine[i]) === JSON.stringify(theirs)) return;
    if (acceptedRaise(request, mine[i], theirs)) result.acceptedRaises++;
    else result.mismatches.push({ request, mine: mine[i], packaging: theirs });
  });
  result.wallMs = performance.now() - started;
  return result;
}

/** The first `count` mismatches, one per line, for a failure message. */
export function describeMismatches(mismatches: readonly Mismatch[], count = 8): string {
  return mismatches
    .slice(0, count)
    .map(
      (m) =>
        `${JSON.stringify(m.request)}\n    src/util: ${JSON.stringify(m.mine)}\n    packaging: ${JSON.stringify(m.packaging)}`,
    )
    .join("\n");
}
