/**
 * init's writes against a directory swapped for a link while they run (issue 28 medium 4: with
 * each component checked by lstat and then opened by path, 1 of 300 racing inits wrote
 * run-container.sh outside the project and exited 0). A worker thread swaps the project's
 * `scripts/` for a link to a directory outside, and back, as fast as it can, while this thread
 * writes thousands of times; nothing may ever appear outside. Some writes are refused (the link
 * was there when the directory was opened) and some go through: both are counted, so the test
 * knows the race really ran.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Worker } from "node:worker_threads";
import { UserError } from "../../src/errors.js";
import { writeProjectFile } from "../../src/util/safe-write.js";
import { applyWrites, planWrites } from "../../src/generate/write.js";

/** tmpfs where there is one: fsync costs nothing there, so thousands of writes fit the test's time. */
const BASE = existsSync("/dev/shm") ? "/dev/shm" : tmpdir();

const SWAPPER = `
const { workerData } = require("node:worker_threads");
const fs = require("node:fs");
const { project, outside, flag } = workerData;
const stop = new Int32Array(flag);
const dir = project + "/scripts", moved = project + "/scripts.moved";
let swaps = 0;
while (Atomics.load(stop, 0) === 0) {
  try {
    fs.renameSync(dir, moved);
    fs.symlinkSync(outside, dir);
    fs.unlinkSync(dir);
    fs.renameSync(moved, dir);
    swaps++;
  } catch {
    // The writer made a new scripts/ in the gap: the attacker clears it and puts the old one back.
    try { fs.rmSync(dir, { recursive: true, force: true }); fs.renameSync(moved, dir); } catch {}
  }
}
Atomics.store(stop, 1, swaps);
`;

interface Race {
  project: string;
  outside: string;
  stop: () => Promise<number>;
}

function startRace(): Race {
  const root = mkdtempSync(join(BASE, "gpuprep-race-"));
  const project = join(root, "project");
  const outside = join(root, "outside");
  mkdirSync(join(project, "scripts"), { recursive: true });
  mkdirSync(outside);
  writeFileSync(join(project, "requirements.txt"), "torch\n");
  const flag = new SharedArrayBuffer(8);
  const worker = new Worker(SWAPPER, { eval: true, workerData: { project, outside, flag } });
  const stop = async (): Promise<number> => {
    Atomics.store(new Int32Array(flag), 0, 1);
    await new Promise((resolve) => worker.once("exit", resolve));
    return Atomics.load(new Int32Array(flag), 1);
  };
  return { project, outside, stop };
}

/** Runs `write` `times` times; a UserError (a link met and refused) is a refusal, anything else fails. */
function race(times: number, write: () => void): { written: number; refused: number } {
  let written = 0;
  let refused = 0;
  for (let i = 0; i < times; i++) {
    try {
      write();
      written++;
    } catch (error) {
      if (!(error instanceof UserError)) throw error;
      refused++;
    }
  }
  return { written, refused };
}

test("3,000 writes into scripts/ while it is swapped for a link: nothing lands outside", async () => {
  const { project, outside, stop } = startRace();
  let counts;
  try {
    counts = race(3000, () => writeProjectFile(project, "scripts/run-container.sh", "#!/bin/sh\n"));
  } finally {
    const swaps = await stop();
    assert.ok(swaps > 100, `the swapper ran ${swaps} times`);
  }
  assert.deepEqual(readdirSync(outside), [], `written ${counts.written}, refused ${counts.refused}`);
  assert.ok(counts.refused > 0 && counts.written > 0, JSON.stringify(counts));
});

test("1,000 whole inits (plan, lock, stage, journal, rename) while scripts/ is swapped: nothing lands outside", async () => {
  const { project, outside, stop } = startRace();
  const files = [
    { path: "Dockerfile", content: "FROM x\n", executable: false, kind: "generated" as const, purpose: "t" },
    {
      path: "scripts/run-container.sh",
      content: "#!/bin/sh\n",
      executable: true,
      kind: "generated" as const,
      purpose: "t",
    },
  ];
  let counts;
  try {
    counts = race(1000, () => applyWrites(project, planWrites(project, files), true));
  } finally {
    await stop();
  }
  assert.deepEqual(readdirSync(outside), [], `written ${counts.written}, refused ${counts.refused}`);
  assert.ok(counts.written > 0, JSON.stringify(counts));
});
