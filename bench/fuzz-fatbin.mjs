// Mutation fuzzing of the fatbin reader: N mutated copies of the committed fixtures (bytes flipped,
// header fields set to extremes, truncated, spliced), each scanned in memory. Fails on any
// exception the reader did not turn into a typed ScanError ("internal") and on any input that
// takes longer than 1 s (a hang). Usage: node bench/fuzz-fatbin.mjs [N=1000000] [SEED=1]
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { scanBuffer } from "../dist/src/fatbin/index.js";

const N = Number(process.argv[2] ?? 1_000_000);
let state = Number(process.argv[3] ?? 1) >>> 0 || 1;
const random = () => (state = (Math.imul(state, 1664525) + 1013904223) >>> 0) / 2 ** 32;
const pick = (n) => Math.floor(random() * n);

const dir = new URL("../test/fixtures/fatbin/", import.meta.url).pathname;
const seeds = readdirSync(dir)
  .filter((n) => /\.(so|o|a)$/.test(n))
  .map((n) => readFileSync(join(dir, n)));
// Offsets of the interesting structures: fatbin containers, ELF and archive headers.
const hotspots = seeds.map((bytes) => {
  const spots = [0, 0x28, 0x3a];
  const magic = Buffer.from([0x50, 0xed, 0x55, 0xba]);
  for (let at = bytes.indexOf(magic); at >= 0; at = bytes.indexOf(magic, at + 1))
    spots.push(at, at + 16, at + 80);
  return spots;
});
const EXTREMES = [0, 1, 0x7f, 0x80, 0xff];

function mutate(index) {
  const bytes = Buffer.from(seeds[index]);
  const spots = hotspots[index];
  const edits = 1 + pick(6);
  for (let e = 0; e < edits; e++) {
    const base = random() < 0.8 ? spots[pick(spots.length)] + pick(96) : pick(bytes.length);
    if (base >= bytes.length) continue;
    const op = pick(4);
    if (op === 0) bytes[base] = pick(256);
    else if (op === 1) bytes[base] = EXTREMES[pick(EXTREMES.length)];
    else if (op === 2 && base + 8 <= bytes.length)
      bytes.writeBigUInt64LE(BigInt(pick(2 ** 31)) * BigInt(pick(2 ** 31)), base);
    else if (base + 4 <= bytes.length) bytes.writeUInt32LE(pick(2 ** 32), base);
  }
  if (random() < 0.1) return bytes.subarray(0, pick(bytes.length));
  return bytes;
}

const started = performance.now();
const codes = {};
let slowest = 0;
for (let i = 0; i < N; i++) {
  const index = i % seeds.length;
  const input = mutate(index);
  const t0 = performance.now();
  const scan = await scanBuffer(input);
  const took = performance.now() - t0;
  slowest = Math.max(slowest, took);
  const code = scan.error?.code ?? "ok";
  codes[code] = (codes[code] ?? 0) + 1;
  if (code === "internal" || took > 1000) {
    console.error(
      `input ${i} (seed file ${index}): ${code} in ${took.toFixed(0)} ms: ${scan.error?.message}`,
    );
    process.exit(1);
  }
}
const seconds = (performance.now() - started) / 1000;
console.log(
  `${N} mutated inputs from ${seeds.length} fixtures in ${seconds.toFixed(1)} s: no crash, no hang ` +
    `(slowest ${slowest.toFixed(1)} ms); outcomes ${JSON.stringify(codes)}`,
);
