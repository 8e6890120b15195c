/**
 * The streamed scan must answer exactly as the positioned one (scanFile) on the same bytes: the
 * real nvcc builds of test/fixtures/fatbin cut into chunks of every awkward size, and mutated
 * copies (the fuzzer's mutations) where the two must agree on entries and error kind.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { scanBuffer } from "./scan-file.js";
import { scanStream, type StreamedFile } from "./stream-scan.js";

const FIXTURES = join(import.meta.dirname, "../../../test/fixtures/fatbin");
const fixtures = readdirSync(FIXTURES).filter((n) => /\.(so|o|a)$/.test(n));

function streamed(bytes: Buffer, chunk: number, path = "x.so"): StreamedFile & { opens: number } {
  const file = {
    path,
    size: bytes.length,
    opens: 0,
    open: async function* () {
      file.opens++;
      for (let at = 0; at < bytes.length; at += chunk) yield bytes.subarray(at, at + chunk);
    },
  };
  return file;
}

const summary = (scan: { entries: { target: string; compression: string; section: string }[] }) =>
  scan.entries.map((e) => `${e.section}:${e.target}:${e.compression}`);

test("every nvcc fixture streamed in chunks of 1, 7, 1000, 65536 bytes and whole: the positioned scan's entries, one pass", async () => {
  assert.ok(fixtures.length >= 14, `found ${fixtures.length} fixtures`);
  for (const name of fixtures) {
    const bytes = readFileSync(join(FIXTURES, name));
    const positioned = await scanBuffer(bytes, name);
    assert.equal(positioned.error, null, name);
    assert.ok(positioned.entries.length > 0 || name === "lto_90.rdc.o", name);
    for (const chunk of [1, 7, 1000, 65_536, bytes.length]) {
      const file = streamed(bytes, chunk, name);
      const result = await scanStream(file);
      assert.equal(result.error, null, `${name} in ${chunk}-byte chunks: ${result.error?.message}`);
      assert.deepEqual(summary(result), summary(positioned), `${name} in ${chunk}-byte chunks`);
      assert.deepEqual(
        result.entries.map((e) => e.member),
        positioned.entries.map((e) => e.member),
      );
      assert.equal(result.passes, 1, `${name}: ${result.passes} passes`);
      assert.equal(file.opens, 1, `${name}: opened ${file.opens} times`);
    }
  }
});

test("a file that is not ELF is not read past its first chunk; a short stream is truncated", async () => {
  const text = Buffer.from("INPUT(-lfoo)\n".repeat(10_000));
  let chunksRead = 0;
  const file: StreamedFile = {
    path: "libtext.so",
    size: text.length,
    open: async function* () {
      for (let at = 0; at < text.length; at += 100) {
        chunksRead++;
        yield text.subarray(at, at + 100);
      }
    },
  };
  const result = await scanStream(file);
  assert.equal(result.error?.code, "not-elf");
  assert.ok(chunksRead <= 1, `read ${chunksRead} chunks of a text file`);

  const bytes = readFileSync(join(FIXTURES, "sm_90a.so"));
  const short = await scanStream({ ...streamed(bytes.subarray(0, 5000), 999), size: bytes.length });
  assert.equal(short.error?.code, "truncated");
  const long = await scanStream({ ...streamed(bytes, 999), size: bytes.length - 10 });
  assert.equal(long.error?.code, "corrupt");
});

test("a fatbin section that does not start with a container still reads right, in a second pass", async () => {
  // Move .nv_fatbin's start 16 bytes earlier over zeros: the section now starts with padding, so
  // no speculative walk begins at its start and the first pass misses its first bytes.
  const bytes = Buffer.from(readFileSync(join(FIXTURES, "sm_90+compute_90.so")));
  const shoff = Number(bytes.readBigUInt64LE(0x28));
  const count = bytes.readUInt16LE(0x3c);
  const names = shoff + bytes.readUInt16LE(0x3e) * 64;
  const nameTable = Number(bytes.readBigUInt64LE(names + 0x18));
  for (let i = 0; i < count; i++) {
    const at = shoff + i * 64;
    const nameOffset = bytes.readUInt32LE(at);
    const name = bytes.toString("latin1", nameTable + nameOffset, bytes.indexOf(0, nameTable + nameOffset));
    if (name !== ".nv_fatbin") continue;
    const offset = Number(bytes.readBigUInt64LE(at + 0x18));
    const size = Number(bytes.readBigUInt64LE(at + 0x20));
    // The 16 bytes before the section are zero in this build (alignment padding of .rodata's end);
    // make sure, so the edit only adds padding.
    bytes.fill(0, offset - 16, offset);
    bytes.writeBigUInt64LE(BigInt(offset - 16), at + 0x18);
    bytes.writeBigUInt64LE(BigInt(size + 16), at + 0x20);
  }
  const positioned = await scanBuffer(bytes);
  assert.equal(positioned.error, null);
  const result = await scanStream(streamed(bytes, 4096));
  assert.equal(result.error, null, result.error?.message);
  assert.deepEqual(summary(result), summary(positioned));
  assert.ok(result.passes >= 2, `passes: ${result.passes}`);
});

test("a section name table far from the section table (lld puts .strtab between) is kept in the first pass", async () => {
  const original = readFileSync(join(FIXTURES, "sm_90+compute_90.so"));
  const shoff = Number(original.readBigUInt64LE(0x28));
  const count = original.readUInt16LE(0x3c);
  const namesIndex = original.readUInt16LE(0x3e);
  const table = Buffer.from(original.subarray(shoff, shoff + count * 64));
  const namesAt = Number(table.readBigUInt64LE(namesIndex * 64 + 0x18));
  const namesSize = Number(table.readBigUInt64LE(namesIndex * 64 + 0x20));
  const names = original.subarray(namesAt, namesAt + namesSize);
  // [everything before the table] [the name table again] [300 KiB of symbol strings] [the table]
  const strings = Buffer.alloc(300 * 1024, "x");
  const copyAt = shoff;
  const newTable = shoff + names.length + strings.length;
  table.writeBigUInt64LE(BigInt(copyAt), namesIndex * 64 + 0x18);
  const bytes = Buffer.concat([original.subarray(0, shoff), names, strings, table]);
  bytes.writeBigUInt64LE(BigInt(newTable), 0x28);
  const positioned = await scanBuffer(bytes);
  assert.equal(positioned.error, null, positioned.error?.message);
  const result = await scanStream(streamed(bytes, 4096));
  assert.equal(result.error, null, result.error?.message);
  assert.deepEqual(summary(result), summary(positioned));
  assert.equal(result.passes, 1);
});

/** The fatbin fuzzer's mutations (bench/fuzz-fatbin.mjs), seeded. */
function mutations(seed: number) {
  let state = seed >>> 0 || 1;
  const random = () => (state = (Math.imul(state, 1664525) + 1013904223) >>> 0) / 2 ** 32;
  const pick = (n: number) => Math.floor(random() * n);
  const seeds = fixtures.map((n) => readFileSync(join(FIXTURES, n)));
  const magic = Buffer.from([0x50, 0xed, 0x55, 0xba]);
  const spots = seeds.map((bytes) => {
    const found = [0, 0x28, 0x3a, Number(bytes.readBigUInt64LE(0x28))];
    for (let at = bytes.indexOf(magic); at >= 0; at = bytes.indexOf(magic, at + 1))
      found.push(at, at + 16, at + 80);
    return found;
  });
  return (i: number) => {
    const index = i % seeds.length;
    const bytes = Buffer.from(seeds[index] as Buffer);
    const hot = spots[index] as number[];
    for (let e = 0; e < 1 + pick(6); e++) {
      const base = random() < 0.8 ? (hot[pick(hot.length)] as number) + pick(96) : pick(bytes.length);
      if (base >= bytes.length) continue;
      const op = pick(4);
      if (op === 0) bytes[base] = pick(256);
      else if (op === 1) bytes[base] = [0, 1, 0x7f, 0x80, 0xff][pick(5)] as number;
      else if (op === 2 && base + 8 <= bytes.length)
        bytes.writeBigUInt64LE(BigInt(pick(2 ** 31)) * BigInt(pick(2 ** 31)), base);
      else if (base + 4 <= bytes.length) bytes.writeUInt32LE(pick(2 ** 32), base);
    }
    return random() < 0.1 ? bytes.subarray(0, pick(bytes.length)) : bytes;
  };
}

test("3,000 mutated fixtures: the streamed scan agrees with the positioned one on entries and error kind", async () => {
  const mutate = mutations(7);
  let withEntries = 0;
  for (let i = 0; i < 3000; i++) {
    const bytes = mutate(i);
    const positioned = await scanBuffer(bytes);
    const result = await scanStream(streamed(bytes, 1 + ((i * 977) % 9000)));
    assert.notEqual(result.error?.code, "internal", `input ${i}: ${result.error?.message}`);
    assert.equal(
      result.error?.code ?? null,
      positioned.error?.code ?? null,
      `input ${i}: ${result.error?.message} vs ${positioned.error?.message}`,
    );
    assert.deepEqual(summary(result), summary(positioned), `input ${i}`);
    if (positioned.entries.length > 0) withEntries++;
  }
  assert.ok(withEntries > 1000, `only ${withEntries} inputs kept entries`);
});
