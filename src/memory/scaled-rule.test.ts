import { test } from "node:test";
import assert from "node:assert/strict";
import { UserError } from "../errors.js";
import { scaledRule } from "./scaled-rule.js";

test("seed 001's own example: batch 256 using 10.35 GB of 16 GB scales to 336", () => {
  const result = scaledRule({ currentBatch: 256, currentBytes: 10.35e9, totalBytes: 16e9 });
  assert.equal(result.maxBatch, 336);
  assert.equal(result.perSampleBytes, Math.ceil(10.35e9 / 256)); // whole bytes
  // The seed's figures: 16 GB x 0.85 = 13.6 GB; 10.35 GB / 256 = 0.0404 GB/sample.
  assert.match(result.formula, /16 GB × 0\.85 = 13\.6 GB/);
  assert.match(result.formula, /0\.04043 GB/);
  assert.match(result.formula, /= 336 /);
});

test("a different usable fraction (the measured search's 5 % margin) changes only the available memory", () => {
  const result = scaledRule({
    currentBatch: 256,
    currentBytes: 10.35e9,
    totalBytes: 16e9,
    usableFraction: 0.95,
  });
  assert.equal(result.maxBatch, Math.floor((16e9 * 0.95) / (10.35e9 / 256)));
  assert.equal(result.maxBatch, 375);
});

test("bad inputs are UserErrors", () => {
  assert.throws(() => scaledRule({ currentBatch: 0, currentBytes: 1e9, totalBytes: 16e9 }), UserError);
  assert.throws(() => scaledRule({ currentBatch: 8, currentBytes: 0, totalBytes: 16e9 }), UserError);
  assert.throws(
    () => scaledRule({ currentBatch: 8, currentBytes: 1e9, totalBytes: 16e9, usableFraction: 1.2 }),
    UserError,
  );
});
