// Mutation fuzzing of the readers issue 25 added (issue 28 item 11): the zip central directory
// and local headers (src/remote/zip.ts), the tar stream (src/remote/tar.ts), the OCI / Docker
// manifest and index JSON and docker save's manifest.json (src/remote/oci.ts), PEP 691 JSON and
// PEP 503 HTML simple pages (src/remote/simple-index.ts), and PEP 825 variant.json
// (src/remote/variant.ts). Seeds are real: wheels zipped by Python's zipfile around the nvcc-built
// test libraries (one with ZIP64 records), tars written by GNU tar in its gnu, pax and ustar
// formats (long names, a hard link), and documents in the shapes the specifications and registries
// give. Mutations: bytes flipped or set to extremes, 16/32/64-bit fields set to extremes, truncation,
// splices; for JSON also structural edits (values swapped for other types, keys dropped, arrays
// repeated, deep nesting); for HTML inserted tags, attributes and entities.
//
// Per input: an exception other than the reader's own typed error (ScanError, ImageDocumentError,
// IndexPageError, VariantJsonError, UserError for lock files) is a crash; an input over 1 s of CPU
// is a hang (CPU, not wall time: the machine is shared; the watchdog names one stuck for 10 s). Input i is a pure
// function of (SEED, i) per target: `--only I` reruns one.
// Times count the reader only, not the making of the input.
// Usage: node bench/fuzz-remote.mjs [N=1000000] [SEED=1] [--target zip|tar|oci|pep691|html|variant] [--only I]
import { execFileSync } from "node:child_process";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  writeFileSync,
  copyFileSync,
  linkSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { BufferSource } from "../dist/src/fatbin/file-reader.js";
import { ScanError } from "../dist/src/fatbin/errors.js";
import { readZipDirectory, memberDataOffset } from "../dist/src/remote/zip.js";
import { tarEntries } from "../dist/src/remote/tar.js";
import { ImageDocumentError, parseDockerSaveManifest, parseImageDocument } from "../dist/src/remote/oci.js";
import { IndexPageError, parseSimpleHtml, parseSimpleJson } from "../dist/src/remote/simple-index.js";
import { VariantJsonError, parseVariantJson } from "../dist/src/remote/variant.js";
import { readLockFile } from "../dist/src/remote/locks.js";
import { scanBuffer } from "../dist/src/fatbin/scan-file.js";
import { scanStream } from "../dist/src/fatbin/stream-scan.js";
import { UserError } from "../dist/src/errors.js";
import { cpuMs, seededRandom, startWatchdog } from "./fuzz-harness.mjs";

const args = process.argv.slice(2);
const flag = (name) => {
  const at = args.indexOf(name);
  if (at < 0) return null;
  const value = args[at + 1];
  args.splice(at, 2);
  return value;
};
const onlyTarget = flag("--target");
const only = flag("--only");
const N = Number(args[0] ?? 1_000_000);
const SEED = Number(args[1] ?? 1) >>> 0 || 1;
const { random, reseed, pick, choose, chooseSmall } = seededRandom(SEED);
const root = new URL("..", import.meta.url).pathname;
const work = mkdtempSync(join(tmpdir(), "gpuprep-fuzz-remote-"));

// ------------------------------------------------------------------ seeds

function zipSeeds() {
  const libs = join(root, "test/fixtures/wheels");
  const seeds = [];
  const specs = [
    {
      name: "one",
      version: "1.0",
      tag: "cp312-cp312-manylinux_2_28_x86_64",
      libs: { "one/libsm90.so": "libsm90.so" },
    },
    {
      name: "mixed",
      version: "2.0",
      tag: "cp312-cp312-manylinux_2_28_x86_64",
      libs: {
        "mixed/a/libptx80.so": "libptx80.so",
        "mixed/b/libsm100a.so": "libsm100a.so",
        "mixed/libsm120ptx.so": "libsm120ptx.so",
      },
      variant: {
        label: "cu130",
        json: {
          "default-priorities": { namespace: ["nvidia"] },
          variants: { cu130: { nvidia: { sm_arch: ["120_real"] } } },
        },
      },
    },
  ];
  for (const spec of specs) {
    const path = execFileSync("python3", [join(libs, "make-wheel.py"), work, JSON.stringify(spec)], {
      encoding: "utf8",
    }).trim();
    seeds.push(readFileSync(path));
  }
  // ZIP64 records (end record, locator, extra fields), as Python writes them when forced.
  const zip64 = join(work, "zip64.whl");
  execFileSync("python3", [
    "-c",
    "import sys, zipfile\nwith zipfile.ZipFile(sys.argv[1], 'w', zipfile.ZIP_DEFLATED) as z:\n" +
      "    for n in ('x/libsm90.so', 'x/libptx80.so'):\n" +
      "        with z.open(n, 'w', force_zip64=True) as f: f.write(open(sys.argv[2] + '/' + n.split('/')[1], 'rb').read())\n",
    zip64,
    libs,
  ]);
  seeds.push(readFileSync(zip64));
  return seeds;
}

function tarSeeds() {
  const dir = join(work, "tree");
  mkdirSync(join(dir, "opt", "cuda", "a".repeat(60), "b".repeat(60)), { recursive: true });
  copyFileSync(join(root, "test/fixtures/wheels/libsm90.so"), join(dir, "opt", "cuda", "libsm90.so"));
  writeFileSync(
    join(dir, "opt", "cuda", "a".repeat(60), "b".repeat(60), `${"c".repeat(40)}.so`),
    "INPUT(-lx)\n",
  );
  writeFileSync(join(dir, "opt", "cuda", ".wh.gone.so"), "");
  linkSync(join(dir, "opt", "cuda", "libsm90.so"), join(dir, "opt", "cuda", "libsm90-link.so"));
  return ["gnu", "pax", "ustar"]
    .map((format) =>
      execFileSync("tar", ["-C", dir, `--format=${format}`, "--sort=name", "-cf", "-", "."], {
        maxBuffer: 16 << 20,
      }),
    )
    .filter((b) => b.length > 0);
}

const digest = (c) => `sha256:${c.repeat(64)}`;
const ociSeeds = [
  {
    schemaVersion: 2,
    mediaType: "application/vnd.oci.image.index.v1+json",
    manifests: [
      {
        mediaType: "application/vnd.oci.image.manifest.v1+json",
        digest: digest("a"),
        size: 1234,
        platform: { os: "linux", architecture: "amd64" },
      },
      {
        mediaType: "application/vnd.oci.image.manifest.v1+json",
        digest: digest("b"),
        size: 1235,
        platform: { os: "linux", architecture: "arm64", variant: "v8" },
      },
    ],
  },
  {
    schemaVersion: 2,
    mediaType: "application/vnd.oci.image.manifest.v1+json",
    config: { mediaType: "application/vnd.oci.image.config.v1+json", digest: digest("c"), size: 700 },
    layers: [1, 2, 3].map((i) => ({
      mediaType: "application/vnd.oci.image.layer.v1.tar+gzip",
      digest: digest(String(i)),
      size: 1000 * i,
    })),
  },
  {
    schemaVersion: 2,
    mediaType: "application/vnd.docker.distribution.manifest.list.v2+json",
    manifests: [
      {
        mediaType: "application/vnd.docker.distribution.manifest.v2+json",
        digest: digest("d"),
        size: 528,
        platform: { architecture: "amd64", os: "linux" },
      },
    ],
  },
  {
    schemaVersion: 2,
    mediaType: "application/vnd.docker.distribution.manifest.v2+json",
    config: { mediaType: "application/vnd.docker.container.image.v1+json", digest: digest("e"), size: 1469 },
    layers: [
      {
        mediaType: "application/vnd.docker.image.rootfs.diff.tar.gzip",
        digest: digest("f"),
        size: 2_811_478,
      },
    ],
  },
  [
    {
      Config: "blobs/sha256/" + "9".repeat(64),
      RepoTags: ["team/app:1"],
      Layers: ["abc/layer.tar", "blobs/sha256/" + "8".repeat(64)],
    },
  ],
];
const pep691Seed = {
  meta: { "api-version": "1.1", "_last-serial": 123 },
  name: "cudakit",
  versions: ["1.0", "2.0"],
  files: [
    {
      filename: "cudakit-1.0-cp312-cp312-manylinux_2_28_x86_64.whl",
      url: "../../files/cudakit-1.0-cp312-cp312-manylinux_2_28_x86_64.whl",
      hashes: { sha256: "ab".repeat(32) },
      "requires-python": ">=3.9",
      size: 123456,
      "upload-time": "2026-01-01T00:00:00Z",
      yanked: false,
    },
    {
      filename: "cudakit-2.0.tar.gz",
      url: "https://files.example/cudakit-2.0.tar.gz",
      hashes: {},
      yanked: "broken build",
      "core-metadata": { sha256: "cd".repeat(32) },
    },
  ],
};
const htmlSeed = `<!DOCTYPE html>
<html><head><meta name="pypi:repository-version" content="1.1"><base href="https://example.org/simple/cudakit/"><title>Links for cudakit</title></head>
<body><h1>Links for cudakit</h1>
<a href="../../files/cudakit-1.0-cp312-cp312-manylinux_2_28_x86_64.whl#sha256=${"ab".repeat(32)}" data-requires-python="&gt;=3.9" data-dist-info-metadata="sha256=${"cd".repeat(32)}">cudakit-1.0-cp312-cp312-manylinux_2_28_x86_64.whl</a><br/>
<a href='https://files.example/cudakit-2.0-py3-none-any.whl' data-yanked="">cudakit-2.0-py3-none-any.whl</a><br/>
<a href="cudakit-3.0.tar.gz">cudakit&#45;3.0.tar.gz &amp; more</a>
</body></html>`;
const variantSeed = {
  $schema: "https://variants-schema.wheelnext.dev/v0.0.3.json",
  "default-priorities": {
    namespace: ["nvidia", "x86_64"],
    feature: { nvidia: ["sm_arch"] },
    property: { nvidia: { sm_arch: ["120_real"] } },
  },
  variants: {
    cu130: {
      nvidia: { sm_arch: ["75_real", "120_real", "120_virtual"], cuda_version_lower_bound: ["13.0"] },
      x86_64: { level: ["v3"] },
    },
  },
};

// ------------------------------------------------------------------ mutations

const EXTREMES = [0, 1, 0x7f, 0x80, 0xff];
function mutateBytes(seed, hotspots = []) {
  const bytes = Buffer.from(seed);
  for (let e = 1 + pick(6); e > 0; e--) {
    const at = hotspots.length && random() < 0.7 ? choose(hotspots) + pick(64) : pick(bytes.length);
    if (at >= bytes.length) continue;
    const op = pick(5);
    if (op === 0) bytes[at] = pick(256);
    else if (op === 1) bytes[at] = choose(EXTREMES);
    else if (op === 2 && at + 2 <= bytes.length)
      bytes.writeUInt16LE(choose([0, 1, 0xffff, pick(0x10000)]), at);
    else if (op === 3 && at + 4 <= bytes.length)
      bytes.writeUInt32LE(choose([0, 0xffffffff, 0x7fffffff, pick(2 ** 32)]), at);
    else if (at + 8 <= bytes.length)
      bytes.writeBigUInt64LE(BigInt(pick(2 ** 31)) * BigInt(pick(2 ** 31) + 1), at);
  }
  const cut = random();
  if (cut < 0.08) return bytes.subarray(0, pick(bytes.length));
  if (cut < 0.1)
    return Buffer.concat([bytes.subarray(0, pick(bytes.length)), bytes.subarray(pick(bytes.length))]);
  return bytes;
}

function randomValue(depth = 0) {
  switch (pick(depth > 3 ? 6 : 8)) {
    case 0:
      return null;
    case 1:
      return choose([0, -1, 1.5, 2 ** 53, 1e308, -0, 65536, 2 ** 31]);
    case 2:
      return choose([
        "",
        "sha256:" + "0".repeat(64),
        "x".repeat(pick(5000)),
        "\u0000\u202e\n",
        "linux",
        "arm64",
        "../../x",
        "1.1",
        "2.0",
      ]);
    case 3:
      return random() < 0.5;
    case 4:
      return [];
    case 5:
      return {};
    case 6:
      return Array.from({ length: pick(4) }, () => randomValue(depth + 1));
    default:
      return Object.fromEntries(
        Array.from({ length: pick(4) }, () => [
          choose([
            "digest",
            "size",
            "platform",
            "manifests",
            "layers",
            "files",
            "url",
            "filename",
            "meta",
            "variants",
            "namespace",
          ]),
          randomValue(depth + 1),
        ]),
      );
  }
}

function mutateJson(seed) {
  const doc = JSON.parse(JSON.stringify(seed));
  for (let e = 1 + pick(4); e > 0; e--) {
    const path = [];
    let node = doc;
    while (node && typeof node === "object" && random() < 0.7) {
      const keys = Object.keys(node);
      if (keys.length === 0) break;
      const key = choose(keys);
      path.push([node, key]);
      node = node[key];
    }
    const [parent, key] = path.at(-1) ?? [null, null];
    if (!parent) continue;
    const op = pick(5);
    if (op === 0) parent[key] = randomValue();
    else if (op === 1) delete parent[key];
    else if (op === 2 && Array.isArray(parent[key]))
      parent[key] = Array.from({ length: chooseSmall([0, 2, 3, 5, 1001, 1500]) }, () => parent[key][0]);
    else if (op === 3) {
      let nested = [];
      for (let depth = chooseSmall([1, 2, 40, 1200]); depth > 0; depth--) nested = [nested];
      parent[key] = nested;
    } else parent[key] = [parent[key]];
  }
  let text;
  try {
    text = JSON.stringify(doc) ?? "null";
  } catch {
    text = "[".repeat(20_000) + "]".repeat(20_000); // nested past stringify's stack: as deep a text
  }
  if (random() < 0.002) text = "[".repeat(100_000) + "]".repeat(100_000);
  // Kept under 6 MiB: larger documents only cost this generator's time (the readers refuse past 4 MiB).
  if (text.length > 6 * 1024 * 1024) text = text.slice(0, 6 * 1024 * 1024);
  return random() < 0.3 ? mutateBytes(Buffer.from(text)).toString("utf8") : text;
}

const TAGS = [
  "<a href='x'>",
  "</a>",
  "<a",
  "<base href='file:///etc/'>",
  '<a href="javascript:alert(1)">j</a>',
  "&#x110000;",
  "&#99999999999;",
  "&amp",
  "<!--",
  "<script>",
  "<a href=#sha256=zz>x</a>",
  '<A HREF="../up.whl" data-yanked>u</A>',
  "\u0000",
  "\u202e",
];
function mutateHtml(seed) {
  let text = seed;
  for (let e = 1 + pick(5); e > 0; e--) {
    const at = pick(text.length + 1);
    const op = pick(4);
    if (op === 0) text = text.slice(0, at) + choose(TAGS) + text.slice(at);
    else if (op === 1) text = text.slice(0, at) + text.slice(at + pick(200));
    else if (op === 2)
      text =
        text.slice(0, at) + choose(TAGS).repeat(chooseSmall([2, 10, 100, 1000, 20_000])) + text.slice(at);
    else text = mutateBytes(Buffer.from(text)).toString("latin1");
  }
  return text;
}

// ------------------------------------------------------------------ targets

async function drain(iterable) {
  for await (const chunk of iterable) void chunk;
}
async function* chunks(bytes) {
  for (let at = 0; at < bytes.length; at += 4096) yield bytes.subarray(at, at + 4096);
}

const zips = zipSeeds();
const zipHot = zips.map((b) => {
  const spots = [];
  for (const sig of [0x04034b50, 0x02014b50, 0x06054b50, 0x06064b50, 0x07064b50]) {
    const needle = Buffer.alloc(4);
    needle.writeUInt32LE(sig);
    for (let at = b.indexOf(needle); at >= 0; at = b.indexOf(needle, at + 1)) spots.push(at);
  }
  return spots;
});
const tars = tarSeeds();
const tarHot = tars.map((b) => Array.from({ length: Math.floor(b.length / 512) }, (_, i) => i * 512));

const fatbins = [
  "sm_90+compute_90.so",
  "sm_120+sm_121.so",
  "sm_90.rdc.so",
  "objects.a",
  "sm_90+compute_75.rdc.o",
  "compute_75.so",
].map((n) => readFileSync(join(root, "test/fixtures/fatbin", n)));
const fatbinHot = fatbins.map((b) => {
  const spots = [0, 0x28, 0x3a, Number(b.readBigUInt64LE(0x28)) || 0];
  const magic = Buffer.from([0x50, 0xed, 0x55, 0xba]);
  for (let at = b.indexOf(magic); at >= 0; at = b.indexOf(magic, at + 1)) spots.push(at, at + 16, at + 80);
  return spots;
});
const lockDir = mkdtempSync(join(existsSync("/dev/shm") ? "/dev/shm" : tmpdir(), "gpuprep-fuzz-locks-"));
const lockSeeds = {
  "uv.lock": `version = 1
requires-python = ">=3.12"

[[package]]
name = "cudakit"
version = "1.0"
source = { registry = "https://example.org/simple" }
resolution-markers = ["sys_platform == 'linux'"]
wheels = [
    { url = "https://example.org/files/cudakit-1.0-cp312-cp312-manylinux_2_28_x86_64.whl", hash = "sha256:${"ab".repeat(32)}", size = 1234 },
    { path = "wheels/cudakit-1.0-cp312-cp312-manylinux_2_28_aarch64.whl", hash = "sha256:${"cd".repeat(32)}" },
]

[[package]]
name = "myproject"
version = "0.1.0"
source = { editable = "." }
`,
  "pylock.toml": `lock-version = "1.0"
requires-python = ">=3.12"
created-by = "uv"

[[packages]]
name = "cudakit"
version = "1.0"
marker = "platform_machine == 'x86_64'"
index = "https://example.org/simple"
wheels = [{ name = "cudakit-1.0-cp312-cp312-manylinux_2_28_x86_64.whl", url = "https://example.org/files/cudakit-1.0-cp312-cp312-manylinux_2_28_x86_64.whl", size = 1234, hashes = { sha256 = "${"ab".repeat(32)}" } }]
`,
  "requirements.txt": `--index-url https://example.org/simple
--extra-index-url https://download.pytorch.org/whl/cu130
-f ./wheels
cudakit==1.0 \
    --hash=sha256:${"ab".repeat(32)}
torch==2.11.0 ; platform_machine == "aarch64"
local @ ./dist/local-1.0-py3-none-any.whl
-r other.txt
`,
};
writeFileSync(join(lockDir, "other.txt"), "numpy<3\n-r requirements.txt\n");

// make(i) builds input i (not timed); read(input) is the reader under test (timed).
const TARGETS = {
  zip: {
    typed: [ScanError],
    make: (i) => mutateBytes(zips[i % zips.length], zipHot[i % zips.length]),
    async read(bytes) {
      const source = new BufferSource(bytes);
      const directory = await readZipDirectory(source);
      for (const member of directory.members.slice(0, 50)) {
        try {
          await memberDataOffset(source, member);
        } catch (error) {
          if (!(error instanceof ScanError)) throw error;
        }
      }
      return `members ${Math.min(directory.members.length, 9)}`;
    },
  },
  tar: {
    typed: [ScanError],
    make: (i) => ({
      bytes: mutateBytes(tars[i % tars.length], tarHot[i % tars.length]),
      drainEvery: 1 + pick(2),
    }),
    async read({ bytes, drainEvery }) {
      let entries = 0;
      for await (const entry of tarEntries(chunks(bytes), { onUnsafePath: () => {} })) {
        entries++;
        if (entries % drainEvery === 0) await drain(entry.body);
      }
      return `entries ${Math.min(entries, 9)}`;
    },
  },
  oci: {
    typed: [ImageDocumentError],
    make: (i) => ({
      save: Array.isArray(ociSeeds[i % ociSeeds.length]),
      text: mutateJson(ociSeeds[i % ociSeeds.length]),
      type: random() < 0.5 ? null : "application/vnd.oci.image.index.v1+json",
    }),
    async read({ save, text, type }) {
      if (save) return `save ${parseDockerSaveManifest(text).length > 0}`;
      return parseImageDocument(text, type).kind;
    },
  },
  pep691: {
    typed: [IndexPageError],
    make: () => mutateJson(pep691Seed),
    async read(text) {
      return `files ${Math.min(parseSimpleJson(text, "https://example.org/simple/cudakit/").length, 9)}`;
    },
  },
  html: {
    typed: [IndexPageError],
    make: () => mutateHtml(htmlSeed),
    async read(text) {
      return `links ${Math.min(parseSimpleHtml(text, "https://example.org/simple/cudakit/").length, 9)}`;
    },
  },
  lock: {
    typed: [UserError],
    make(i) {
      const names = Object.keys(lockSeeds);
      const name = names[i % names.length];
      let text = lockSeeds[name];
      if (random() < 0.5) text = mutateBytes(Buffer.from(text)).toString(random() < 0.5 ? "utf8" : "latin1");
      else {
        const lines = text.split("\n");
        for (let e = 1 + pick(4); e > 0; e--) {
          const at = pick(lines.length);
          const op = pick(3);
          if (op === 0) lines.splice(at, 1);
          else if (op === 1) {
            // A line repeated up to 5,000 times, but no line over 1 MiB: a repeat of a repeated
            // line grew past V8's string limit and crashed the fuzzer itself (not the reader).
            const line = lines[pick(lines.length)];
            const times = chooseSmall([1, 2, 50, 5000]);
            lines.splice(at, 0, line.length * times > 2 ** 20 ? line : line.repeat(times));
          } else
            lines[at] =
              (lines[at] ?? "") +
              choose([
                " = [",
                "{",
                "]]",
                "\\",
                "[[package]]",
                "wheels = 3",
                "source = { registry = 1 }",
                "\u0000",
                " --hash=sha256:zz",
              ]);
        }
        text = lines.join("\n");
      }
      writeFileSync(join(lockDir, name), text);
      return join(lockDir, name);
    },
    async read(path) {
      const lock = readLockFile(path);
      return `${lock.kind} ${Math.min(lock.packages.length, 9)}`;
    },
  },
  stream: {
    // The streamed ELF scan must agree with the positioned one on every mutated fixture.
    typed: [],
    make: (i) => ({
      bytes: mutateBytes(fatbins[i % fatbins.length], fatbinHot[i % fatbins.length]),
      chunk: 1 + pick(70_000),
    }),
    async read({ bytes, chunk }) {
      const positioned = await scanBuffer(bytes);
      const streamed = await scanStream({
        path: "x",
        size: bytes.length,
        open: async function* () {
          for (let at = 0; at < bytes.length; at += chunk) yield bytes.subarray(at, at + chunk);
        },
      });
      const entries = (scan) =>
        scan.entries.map((e) => `${e.section}:${e.target}:${e.compression}:${e.member}`).join(",");
      if (
        (streamed.error?.code ?? null) !== (positioned.error?.code ?? null) ||
        entries(streamed) !== entries(positioned)
      )
        throw new Error(
          `the streamed scan disagrees: ${streamed.error?.message ?? entries(streamed)} vs ${positioned.error?.message ?? entries(positioned)}`,
        );
      if (streamed.error?.code === "internal") throw new Error(`internal: ${streamed.error.message}`);
      return streamed.error
        ? `${streamed.error.code}`
        : `ok, ${streamed.passes} pass${streamed.passes === 1 ? "" : "es"}`;
    },
  },
  variant: {
    typed: [VariantJsonError],
    make: () => mutateJson(variantSeed),
    async read(text) {
      return `variants ${Object.keys(parseVariantJson(text).variants).length}`;
    },
  },
};

// A reader stuck in a loop never returns to report itself: a second thread names the input.
const progress = startWatchdog(10_000);
let failed = false;
for (const [name, target] of Object.entries(TARGETS)) {
  if (onlyTarget && onlyTarget !== name) continue;
  const outcomes = {};
  let slowest = 0;
  let slowestCpu = 0;
  const started = performance.now();
  const first = only !== null ? Number(only) : 0;
  const last = only !== null ? Number(only) + 1 : N;
  for (let i = first; i < last; i++) {
    reseed(i + name.length * 1_000_003);
    Atomics.store(progress, 0, i + 1);
    const input = target.make(i);
    if (process.env.DUMP && only !== null)
      (await import("node:fs")).writeFileSync(
        process.env.DUMP,
        typeof input === "string" ? input : (input.text ?? ""),
      );
    const t0 = performance.now();
    const cpu0 = process.cpuUsage();
    let outcome;
    try {
      outcome = await target.read(input);
    } catch (error) {
      if (!target.typed.some((type) => error instanceof type)) {
        console.error(`${name} input ${i}: crash: ${error?.stack ?? error}`);
        failed = true;
        break;
      }
      outcome = `refused (${error.constructor.name})`;
    }
    const took = performance.now() - t0;
    const cpu = cpuMs(cpu0);
    slowest = Math.max(slowest, took);
    slowestCpu = Math.max(slowestCpu, cpu);
    if (cpu > 1000) {
      console.error(`${name} input ${i}: hang: ${cpu.toFixed(0)} ms of CPU (${took.toFixed(0)} ms wall)`);
      failed = true;
      break;
    }
    outcomes[outcome] = (outcomes[outcome] ?? 0) + 1;
  }
  const seconds = (performance.now() - started) / 1000;
  console.log(
    `${name}: ${last - first} inputs in ${seconds.toFixed(1)} s, slowest ${slowest.toFixed(1)} ms wall (${slowestCpu.toFixed(1)} ms CPU); outcomes ${JSON.stringify(outcomes)}`,
  );
  if (failed) break;
}
process.exit(failed ? 1 : 0);
