/**
 * The scanner bounded in bytes and time (issue 28 medium 6 and low): an ar "//" table claiming
 * 1.9 GB was allocated whole; a sparse 20 GiB .nv_fatbin section of zeros was walked for 138 s;
 * the scan had no time limit; and `scan` of a directory it may not list said "0 files examined",
 * exit 0. Real nvcc-built fixtures (test/fixtures/fatbin), patched into sparse files.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import {
  chmodSync,
  closeSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readFileSync,
  statSync,
  truncateSync,
  writeFileSync,
  writeSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { scanFile } from "../../src/fatbin/scan-file.js";
import { scanFiles } from "../../src/fatbin/scan-paths.js";
import { CLI } from "../support/cli.js";

const FIXTURES = join(import.meta.dirname, "../../../test/fixtures/fatbin");
const GiB = 1024 ** 3;

function fresh(): string {
  return mkdtempSync(join(tmpdir(), "gpuprep-scan-bounds-"));
}

/** An ar archive whose "//" member claims `size` bytes, made that long by a hole (no disk used). */
function archiveWithLongNameTable(size: number): string {
  const path = join(fresh(), "libhuge.a");
  const header = "//".padEnd(48, " ") + String(size).padEnd(10, " ") + "`\n";
  writeFileSync(path, `!<arch>\n${header}`);
  truncateSync(path, 8 + 60 + size);
  return path;
}

/** Section header table entry of `name` in an ELF64 little-endian file: its byte offset. */
function sectionHeaderOffset(elf: Buffer, name: string): number {
  const shoff = Number(elf.readBigUInt64LE(0x28));
  const shentsize = elf.readUInt16LE(0x3a);
  const shnum = elf.readUInt16LE(0x3c);
  const shstrndx = elf.readUInt16LE(0x3e);
  const strtab = Number(elf.readBigUInt64LE(shoff + shstrndx * shentsize + 0x18));
  for (let i = 0; i < shnum; i++) {
    const at = shoff + i * shentsize;
    const nameAt = strtab + elf.readUInt32LE(at);
    if (elf.toString("latin1", nameAt, elf.indexOf(0, nameAt)) === name) return at;
  }
  throw new Error(`no ${name} section`);
}

/** The sm_80 fixture with its .nv_fatbin moved to a hole of `size` zero bytes at the file's end. */
function sparseFatbinSection(size: number): string {
  const elf = readFileSync(join(FIXTURES, "sm_80.compress-all-lz4.so"));
  const header = sectionHeaderOffset(elf, ".nv_fatbin");
  const start = Math.ceil(elf.length / 4096) * 4096;
  elf.writeBigUInt64LE(BigInt(start), header + 0x18);
  elf.writeBigUInt64LE(BigInt(size), header + 0x20);
  const path = join(fresh(), "libsparse.so");
  writeFileSync(path, elf);
  truncateSync(path, start + size);
  return path;
}

test("an ar long-name table claiming 1.9 GB is refused before it is read", { timeout: 30_000 }, async () => {
  const path = archiveWithLongNameTable(1_900_000_000);
  const rss = process.memoryUsage().rss;
  const started = Date.now();
  const scan = await scanFile(path);
  assert.equal(scan.error?.code, "unsupported", JSON.stringify(scan.error));
  assert.match(scan.error?.message ?? "", /long-name table of 1900000000 bytes/);
  assert.ok(Date.now() - started < 2000);
  assert.ok(process.memoryUsage().rss - rss < 100 * 1024 * 1024, "the table was allocated");
});

test("a real archive's long names still resolve (silent case)", async () => {
  const scan = await scanFile(join(FIXTURES, "objects.a"));
  assert.equal(scan.error, null);
  assert.ok(scan.entries.length > 0);
});

test(
  "a sparse 20 GiB .nv_fatbin of zeros is refused after 16 MiB of padding, in well under a second",
  { timeout: 30_000 },
  async () => {
    const path = sparseFatbinSection(20 * GiB);
    const started = Date.now();
    const scan = await scanFile(path);
    const elapsed = Date.now() - started;
    assert.equal(scan.error?.code, "corrupt", JSON.stringify(scan.error));
    assert.match(scan.error?.message ?? "", /more than 16 MiB of zero padding/);
    assert.ok(elapsed < 3000, `took ${elapsed} ms`);
  },
);

test("the scan's time limit: files not read in time get a time-limit error, none is skipped silently", async () => {
  const files = Array.from({ length: 40 }, () => join(FIXTURES, "sm_80.compress-all-lz4.so"));
  const scans = await scanFiles(files, { timeLimitMs: 0, concurrency: 1 });
  assert.equal(scans.length, 40);
  assert.ok(
    scans.every((s) => s.error?.code === "time-limit"),
    JSON.stringify(scans[0]?.error),
  );
  const inTime = await scanFiles(files.slice(0, 2), { timeLimitMs: 60_000 });
  assert.ok(inTime.every((s) => s.error === null && s.entries.length > 0));
});

test("scan of a directory it may not list is an error (exit 2), not '0 files examined'", (t) => {
  if (process.getuid?.() !== 0 && spawnSync("setpriv", ["--help"]).status !== 0) {
    t.skip("needs setpriv (util-linux) to run as another user");
    return;
  }
  const dir = join(fresh(), "private");
  mkdirSync(dir);
  const copy = join(dir, "lib.so");
  const fd = openSync(copy, "w");
  writeSync(fd, readFileSync(join(FIXTURES, "sm_80.compress-all-lz4.so")));
  closeSync(fd);
  chmodSync(dir, 0o700);
  // Nobody must reach the directory to be refused its listing: every directory above it gets
  // search permission for others where it lacks it (the test runner's own temp root is 0700).
  for (let above = dirname(dir); ; above = dirname(above)) {
    const mode = statSync(above).mode & 0o7777;
    if ((mode & 0o001) === 0) chmodSync(above, mode | 0o001);
    if (above === dirname(above)) break;
  }
  // As nobody: the directory is there, but cannot be listed.
  const asNobody =
    process.getuid?.() === 0 ? ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"] : [];
  const run = spawnSync(
    asNobody[0] ?? process.execPath,
    [...asNobody.slice(1), ...(asNobody.length ? [process.execPath] : []), CLI, "scan", dir],
    {
      encoding: "utf8",
      env: { ...process.env, NO_COLOR: "1" },
    },
  );
  assert.equal(run.status, 2, run.stdout + run.stderr);
  assert.match(run.stdout + run.stderr, /permission denied|EACCES/i);
  assert.doesNotMatch(run.stdout, /^0 files examined/m);
});
