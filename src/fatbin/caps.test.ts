/**
 * The scanner's bounds against hostile headers (issue 12): a 64-byte ELF header on a sparse file
 * must not make it allocate what the header claims.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtempSync, truncateSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { scanBuffer, scanFile } from "./scan-file.js";

/** An ELF64 LE shared-object header: section table at `shoff`, `shnum` entries of `shentsize` bytes. */
function elfHeader(fields: { shoff: number; shentsize: number; shnum: number; shstrndx: number }): Buffer {
  const header = Buffer.alloc(64);
  header.writeUInt32LE(0x464c457f, 0);
  header[4] = 2; // ELFCLASS64
  header[5] = 1; // little-endian
  header[6] = 1;
  header.writeUInt16LE(3, 0x10); // ET_DYN
  header.writeBigUInt64LE(BigInt(fields.shoff), 0x28);
  header.writeUInt16LE(64, 0x34);
  header.writeUInt16LE(fields.shentsize, 0x3a);
  header.writeUInt16LE(fields.shnum, 0x3c);
  header.writeUInt16LE(fields.shstrndx, 0x3e);
  return header;
}

function sparseFile(header: Buffer, size: number): string {
  const path = join(mkdtempSync(join(tmpdir(), "gpuprep-elf-caps-")), "libhostile.so");
  writeFileSync(path, header);
  truncateSync(path, size);
  return path;
}

test("e_shentsize must be 64: a 65,535 x 65,535 table on a 4 GB sparse file is refused, not read", async () => {
  const path = sparseFile(
    elfHeader({ shoff: 64, shentsize: 65_535, shnum: 65_535, shstrndx: 1 }),
    65_535 * 65_535 + 64,
  );
  const before = process.memoryUsage().rss;
  const scan = await scanFile(path);
  assert.equal(scan.error?.code, "unsupported");
  assert.match(scan.error?.message ?? "", /section header size 65535, not the ELF64 size 64/);
  assert.ok(process.memoryUsage().rss - before < 64 * 1024 * 1024, "no table-sized allocation");
  // Smaller than 64 is refused as well (it would make entries overlap).
  const small = await scanBuffer(
    Buffer.concat([elfHeader({ shoff: 64, shentsize: 40, shnum: 2, shstrndx: 1 }), Buffer.alloc(80)]),
  );
  assert.equal(small.error?.code, "unsupported");
});

test("the table is bounded by the file and by the section count cap", async () => {
  // 65,535 entries of 64 bytes need 4 MiB; the file has 1 KiB: truncated, nothing allocated.
  const past = await scanBuffer(
    Buffer.concat([elfHeader({ shoff: 64, shentsize: 64, shnum: 65_535, shstrndx: 1 }), Buffer.alloc(1024)]),
  );
  assert.equal(past.error?.code, "truncated");
  // Extended numbering (e_shnum = 0): section 0's sh_size claims 2^40 sections.
  const section0 = Buffer.alloc(64);
  section0.writeBigUInt64LE(1n << 40n, 0x20);
  const extended = await scanBuffer(
    Buffer.concat([elfHeader({ shoff: 64, shentsize: 64, shnum: 0, shstrndx: 0 }), section0]),
  );
  assert.equal(extended.error?.code, "corrupt");
  assert.match(extended.error?.message ?? "", /absurd section count/);
  // An offset past 2^53 is an impossible range, not a huge read.
  const far = await scanBuffer(
    Buffer.concat([elfHeader({ shoff: 2 ** 60, shentsize: 64, shnum: 4, shstrndx: 1 }), Buffer.alloc(64)]),
  );
  assert.equal(far.error?.code, "truncated");
});

test("a FIFO named as a library is reported unreadable without blocking", async () => {
  const path = join(mkdtempSync(join(tmpdir(), "gpuprep-elf-fifo-")), "libfifo.so");
  execFileSync("mkfifo", [path]);
  const scan = await scanFile(path);
  assert.equal(scan.error?.code, "unreadable");
  assert.match(scan.error?.message ?? "", /not a regular file/);
});
