import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, symlinkSync, truncateSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { UserError } from "../errors.js";
import { isInside, printablePrefix, readTextFile } from "./safe-read.js";

const opts = { maxBytes: 1024, hint: "hint" };

function fresh(): string {
  return mkdtempSync(join(tmpdir(), "gpuprep-safe-read-"));
}

test("a FIFO is refused at once, not waited on", () => {
  const dir = fresh();
  const fifo = join(dir, "pyproject.toml");
  execFileSync("mkfifo", [fifo]); // no writer ever opens it: a plain open would block forever
  assert.throws(
    () => readTextFile(fifo, opts),
    (e: unknown) => e instanceof UserError && /FIFO/.test(e.message),
  );
});

test("a link to /dev/zero, a directory and an oversize file are refused; the cap is never exceeded", () => {
  const dir = fresh();
  symlinkSync("/dev/zero", join(dir, "zero"));
  assert.throws(() => readTextFile(join(dir, "zero"), opts), /is a device/);
  mkdirSync(join(dir, "sub"));
  assert.throws(() => readTextFile(join(dir, "sub"), opts), /is a directory/);
  const big = join(dir, "big");
  writeFileSync(big, "");
  truncateSync(big, 10 * 1024 * 1024 * 1024); // sparse 10 GB
  assert.throws(() => readTextFile(big, opts), /larger than 1 KiB/);
  writeFileSync(join(dir, "ok"), "x".repeat(1024));
  assert.equal(readTextFile(join(dir, "ok"), opts).length, 1024);
  writeFileSync(join(dir, "over"), "x".repeat(1025));
  assert.throws(() => readTextFile(join(dir, "over"), opts), /larger than/);
});

test("a file whose st_size lies (procfs says 0) is read to its end, and still capped", () => {
  const status = readTextFile("/proc/self/status", { maxBytes: 1024 * 1024, hint: "" });
  assert.match(status, /^Name:/);
  assert.match(status, /VmRSS/); // far past the first chunk a size-0 fstat would allow
  assert.throws(() => readTextFile("/proc/self/status", { maxBytes: 16, hint: "" }), /larger than/);
});

test("printablePrefix cuts and replaces control characters", () => {
  assert.equal(printablePrefix("a\u001b]0;title\u0007b"), "a?]0;title?b");
  const long = printablePrefix("SECRET=".repeat(100));
  assert.ok(long.startsWith("SECRET=SECRET="));
  assert.ok(long.length < 90, long);
  assert.match(long, /700 characters/);
});

test("isInside resolves links on both sides", () => {
  const dir = fresh();
  mkdirSync(join(dir, "p"));
  writeFileSync(join(dir, "p", "r.txt"), "");
  writeFileSync(join(dir, "outside.txt"), "");
  symlinkSync(join(dir, "outside.txt"), join(dir, "p", "link.txt"));
  assert.equal(isInside(join(dir, "p"), join(dir, "p", "r.txt")), true);
  assert.equal(isInside(join(dir, "p"), join(dir, "p", "link.txt")), false);
  assert.equal(isInside(join(dir, "p"), "/proc/self/environ"), false);
});
