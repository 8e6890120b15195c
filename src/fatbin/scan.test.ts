/**
 * The reader against real nvcc 13.0 builds (test/fixtures/fatbin/build.sh): it must report
 * exactly what each was built with, and survive truncated, corrupted and hostile copies.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { scanBuffer, scanFile } from "./scan-file.js";
import { scanEnvironmentBinaries } from "./scan-paths.js";

const FIXTURES = join(import.meta.dirname, "../../../test/fixtures/fatbin");
const fixture = (name: string) => join(FIXTURES, name);

/** target:compression of every entry, in file order. */
async function entriesOf(name: string): Promise<string[]> {
  const scan = await scanFile(fixture(name));
  assert.equal(scan.error, null, `${name}: ${scan.error?.message}`);
  return scan.entries.map((e) => `${e.target}:${e.compression}${e.member ? "@" + e.member : ""}`);
}

// nvcc 13.0 puts a shared library's SASS in two containers (one entry each); PTX is compressed
// with ZSTD by default and SASS is not (fatbinary --help: "Compress ptx and debug images").
const EXPECTED: Record<string, string[]> = {
  "sm_80.so": ["sm_80:none", "sm_80:none"],
  "sm_90+compute_90.so": ["sm_90:none", "compute_90:zstd", "sm_90:none"],
  "sm_90a.so": ["sm_90a:none", "sm_90a:none"],
  "sm_100f.so": ["sm_100f:none", "sm_100f:none"],
  "sm_120+sm_121.so": ["sm_120:none", "sm_121:none", "sm_120:none", "sm_121:none"],
  "compute_75.so": ["compute_75:zstd"],
  "sm_90+compute_90.uncompressed.so": ["sm_90:none", "compute_90:none", "sm_90:none"],
  "sm_80.compress-all-zstd.so": ["sm_80:zstd", "sm_80:zstd"],
  "sm_80.compress-all-lz4.so": ["sm_80:lz4", "sm_80:lz4"],
  "sm_90.o": ["sm_90:none"],
  // Only .nv_fatbin: the __nv_relfatbin copy is for programs that device-link against the library.
  "sm_90.rdc.so": ["sm_90:none"],
  "sm_90+compute_75.rdc.o": ["sm_90:zstd", "compute_75:zstd"],
  "lto_90.rdc.o": ["lto_90:zstd"],
  "objects.a": [
    "sm_90:none@sm_90.o",
    "sm_90:zstd@sm_90+compute_75.rdc.o",
    "compute_75:zstd@sm_90+compute_75.rdc.o",
  ],
};

for (const [name, expected] of Object.entries(EXPECTED)) {
  test(`reads exactly what ${name} was built with`, async () => {
    assert.deepEqual(await entriesOf(name), expected);
  });
}

test("kinds, sizes and sections are reported", async () => {
  const scan = await scanFile(fixture("sm_90+compute_75.rdc.o"));
  const [sass, ptx] = scan.entries;
  assert.equal(sass?.kind, "sass");
  assert.equal(sass?.section, "__nv_relfatbin");
  assert.equal(ptx?.kind, "ptx");
  assert.ok((ptx?.uncompressedBytes ?? 0) > (ptx?.payloadBytes ?? 0) / 2);
  const plain = await scanFile(fixture("sm_90+compute_90.uncompressed.so"));
  assert.equal(plain.entries[1]?.uncompressedBytes, null);
  assert.equal(plain.entries[1]?.section, ".nv_fatbin");
});

test("a non-ELF file and a missing file are typed errors", async () => {
  assert.equal((await scanFile(fixture("kernel.cu"))).error?.code, "not-elf");
  assert.equal((await scanFile(fixture("no-such-file.so"))).error?.code, "unreadable");
});

const work = mkdtempSync(join(tmpdir(), "gpuprep-fatbin-"));
function variant(name: string, bytes: Buffer): string {
  const path = join(work, name);
  writeFileSync(path, bytes);
  return path;
}

test("every truncation of a fixture gives entries or a typed error, never a throw", async () => {
  const original = readFileSync(fixture("sm_90+compute_90.so"));
  for (let cut = 0; cut < original.length; cut += 97) {
    const scan = await scanFile(variant("cut.so", original.subarray(0, cut)));
    assert.notEqual(scan.error?.code, "internal", scan.error?.message);
    if (cut < 64) assert.ok(scan.error, `cut at ${cut} must fail`);
  }
});

/** Offset of the first fatbin container in a fixture (found by its magic). */
function firstContainer(bytes: Buffer): number {
  const magic = Buffer.from([0x50, 0xed, 0x55, 0xba]);
  const at = bytes.indexOf(magic);
  assert.ok(at > 0);
  return at;
}

test("hostile headers: sizes past the end, zero sizes, absurd counts", async () => {
  const original = readFileSync(fixture("sm_90+compute_90.so"));
  const at = firstContainer(original);

  const hugeContainer = Buffer.from(original);
  hugeContainer.writeBigUInt64LE(0xffffffffffn, at + 8);
  assert.equal((await scanFile(variant("huge.so", hugeContainer))).error?.code, "truncated");

  const zeroEntryHeader = Buffer.from(original);
  zeroEntryHeader.writeUInt32LE(0, at + 16 + 4); // entry header size 0 would loop forever
  assert.equal((await scanFile(variant("zero.so", zeroEntryHeader))).error?.code, "corrupt");

  const hugePayload = Buffer.from(original);
  hugePayload.writeBigUInt64LE(0x7fffffffffffffffn, at + 16 + 8);
  assert.equal((await scanFile(variant("payload.so", hugePayload))).error?.code, "truncated");

  const sections = Buffer.from(original);
  sections.writeUInt16LE(0xfff0, 0x3c); // e_shnum
  assert.ok((await scanFile(variant("sections.so", sections))).error);

  const badMagic = Buffer.from(original);
  badMagic.writeUInt32LE(0x12345678, at);
  assert.equal((await scanFile(variant("magic.so", badMagic))).error?.code, "corrupt");
});

test("a short fuzz over mutated fixtures never throws or hangs", async () => {
  const seeds = ["sm_90+compute_90.so", "objects.a", "sm_90+compute_75.rdc.o"].map((n) =>
    readFileSync(fixture(n)),
  );
  let state = 12345;
  const random = () => (state = (state * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
  const deadline = performance.now() + 3000;
  let runs = 0;
  while (performance.now() < deadline) {
    const seed = seeds[runs % seeds.length] as Buffer;
    const bytes = Buffer.from(seed);
    const at = firstContainer(bytes);
    for (let k = 0; k < 1 + Math.floor(random() * 8); k++) {
      // Bias mutations towards the fatbin headers, where the interesting lengths live.
      const where = random() < 0.7 ? at + Math.floor(random() * 256) : Math.floor(random() * bytes.length);
      if (where < bytes.length) bytes[where] = Math.floor(random() * 256);
    }
    const scan = await scanBuffer(bytes);
    assert.notEqual(scan.error?.code, "internal", scan.error?.message);
    runs++;
  }
  assert.ok(runs > 1000, `only ${runs} fuzz runs`);
});

test("environment scan lists only files with CUDA code and summarises targets", async () => {
  const facts = await scanEnvironmentBinaries([FIXTURES]);
  const byName = new Map(facts.files.map((f) => [f.path.split("/").pop(), f]));
  assert.deepEqual(byName.get("sm_120+sm_121.so")?.sass, ["sm_120", "sm_121"]);
  assert.deepEqual(byName.get("sm_90+compute_90.so")?.ptx, ["compute_90"]);
  assert.deepEqual(byName.get("objects.a")?.sass, ["sm_90"]);
  assert.equal(byName.has("kernel.cu"), false);
  assert.ok(facts.filesExamined >= Object.keys(EXPECTED).length);
});
