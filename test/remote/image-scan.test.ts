/**
 * Images read without Docker: layers made by GNU tar from folders of the nvcc-built libraries
 * (test/fixtures/wheels), put together as a legacy `docker save` archive, an OCI image layout
 * (directory and tar) and a two-platform OCI index. Whiteouts (`.wh.NAME`, `.wh..wh..opq`), a
 * hard link, an entry that climbs out of the root, and layer digests are checked. The Docker
 * engine's own images and a registry are test/e2e/images.sh's.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { copyFileSync, linkSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { openImageArchive, openOciLayout, scanImage } from "../../src/remote/image.js";
import { scanImageRef } from "../../src/remote/index.js";
import { runCliAsync } from "./cli-async.js";
import { WHEEL_FIXTURES } from "./wheels.js";

const root = mkdtempSync(join(tmpdir(), "gpuprep-images-"));

/** A layer as GNU tar writes it from a folder of `files` (path -> a library of the fixtures, or text). */
function layer(name: string, files: Record<string, string>, extraArgs: string[] = []): Buffer {
  const dir = join(root, name);
  for (const [path, source] of Object.entries(files)) {
    mkdirSync(join(dir, path, ".."), { recursive: true });
    if (source.endsWith(".so")) copyFileSync(join(WHEEL_FIXTURES, source), join(dir, path));
    else writeFileSync(join(dir, path), source);
  }
  return execFileSync(
    "tar",
    ["-C", dir, "--sort=name", "--owner=0", "--group=0", ...extraArgs, "-cf", "-", "."],
    {
      maxBuffer: 64 << 20,
    },
  );
}

const base = layer("base", {
  "opt/cuda/lib/libsm90.so": "libsm90.so",
  "opt/cuda/lib/libsm100a.so": "libsm100a.so",
  "opt/ext/libold.so": "libptx80.so",
  "etc/os-release": "ID=test\n",
});
const upper = (() => {
  const files = {
    "opt/cuda/lib/.wh.libsm100a.so": "",
    "opt/ext/.wh..wh..opq": "",
    "opt/ext/libsm120ptx.so": "libsm120ptx.so",
    evil: "x",
  };
  // One entry named ../evil: it must be reported and skipped, never followed.
  return layer("upper", files, ["-P", "--transform", "s,^\\./evil$,../evil,"]);
})();
const linked = (() => {
  const dir = join(root, "linked", "opt", "more");
  mkdirSync(dir, { recursive: true });
  copyFileSync(join(WHEEL_FIXTURES, "libptx80.so"), join(dir, "libptx80.so"));
  linkSync(join(dir, "libptx80.so"), join(dir, "libptx80-link.so"));
  return execFileSync("tar", ["-C", join(root, "linked"), "--sort=name", "-cf", "-", "."]);
})();

const sha = (bytes: Buffer) => createHash("sha256").update(bytes).digest("hex");

/** `docker save`'s legacy layout (Docker < 25): manifest.json and ID/layer.tar, plain tars. */
function dockerSave(): string {
  const dir = join(root, "save");
  const layers = [base, gzipSync(upper), linked];
  const paths = layers.map((bytes, i) => {
    mkdirSync(join(dir, `l${i}`), { recursive: true });
    writeFileSync(join(dir, `l${i}`, "layer.tar"), bytes);
    return `l${i}/layer.tar`;
  });
  writeFileSync(join(dir, "config.json"), JSON.stringify({ architecture: "amd64", os: "linux" }));
  writeFileSync(
    join(dir, "manifest.json"),
    JSON.stringify([{ Config: "config.json", RepoTags: ["t:1"], Layers: paths }]),
  );
  const out = join(root, "image.tar");
  execFileSync("tar", ["-C", dir, "-cf", out, "."]);
  return out;
}

/** An OCI layout: blobs by digest, an index with one manifest per platform. */
function ociLayout(platforms: Record<string, Buffer[]>): string {
  const dir = mkdtempSync(join(root, "oci-"));
  mkdirSync(join(dir, "blobs", "sha256"), { recursive: true });
  const blob = (bytes: Buffer) => {
    const digest = sha(bytes);
    writeFileSync(join(dir, "blobs", "sha256", digest), bytes);
    return { digest: `sha256:${digest}`, size: bytes.length };
  };
  const manifests = Object.entries(platforms).map(([architecture, layers]) => {
    const config = blob(Buffer.from(JSON.stringify({ architecture, os: "linux" })));
    const manifest = Buffer.from(
      JSON.stringify({
        schemaVersion: 2,
        mediaType: "application/vnd.oci.image.manifest.v1+json",
        config: { mediaType: "application/vnd.oci.image.config.v1+json", ...config },
        layers: layers.map((l) => ({
          mediaType: "application/vnd.oci.image.layer.v1.tar+gzip",
          ...blob(gzipSync(l)),
        })),
      }),
    );
    return {
      mediaType: "application/vnd.oci.image.manifest.v1+json",
      ...blob(manifest),
      platform: { os: "linux", architecture },
    };
  });
  writeFileSync(join(dir, "oci-layout"), JSON.stringify({ imageLayoutVersion: "1.0.0" }));
  writeFileSync(
    join(dir, "index.json"),
    JSON.stringify({ schemaVersion: 2, mediaType: "application/vnd.oci.image.index.v1+json", manifests }),
  );
  return dir;
}

const EXPECTED = {
  "opt/cuda/lib/libsm90.so": "sm_90 (layer 0)",
  "opt/ext/libsm120ptx.so": "sm_120 compute_120 (layer 1)",
  "opt/more/libptx80-link.so": "compute_80 (layer 2)",
  "opt/more/libptx80.so": "compute_80 (layer 2)",
};

function summary(scan: Awaited<ReturnType<typeof scanImage>>) {
  return Object.fromEntries(
    scan.libraries.map((l) => [
      l.path,
      `${[...new Set(l.entries.map((e) => e.target))].join(" ")} (layer ${l.layer})`,
    ]),
  );
}

test("a docker save archive: whiteouts and an opaque directory hide the base's libraries; a hard link; ../ refused", async () => {
  const scan = await scanImage(await openImageArchive(dockerSave(), "x86_64"));
  assert.deepEqual(summary(scan), EXPECTED);
  assert.deepEqual(scan.removed, ["opt/cuda/lib/libsm100a.so", "opt/ext/libold.so"]);
  assert.deepEqual(scan.unsafePaths, ["../evil"]);
  assert.equal(scan.layers, 3);
});

test("an OCI layout (directory and tar): the same image; an index picks the platform; a damaged blob is refused", async () => {
  const dir = ociLayout({ amd64: [base, upper, linked], arm64: [base] });
  const amd64 = await scanImage(await openOciLayout(dir, "x86_64"));
  assert.deepEqual(summary(amd64), EXPECTED);
  assert.deepEqual(summary(await scanImageRef(dir, { arch: "x86_64" })), EXPECTED, "the library entry point");
  const arm64 = await scanImage(await openOciLayout(dir, "aarch64"));
  assert.deepEqual(Object.keys(summary(arm64)), [
    "opt/cuda/lib/libsm100a.so",
    "opt/cuda/lib/libsm90.so",
    "opt/ext/libold.so",
  ]);
  const archive = join(root, "oci.tar");
  execFileSync("tar", ["-C", dir, "-cf", archive, "."]);
  assert.deepEqual(summary(await scanImage(await openImageArchive(archive, "x86_64"))), EXPECTED);
  // One byte of the upper layer's blob changed: its digest no longer matches.
  const index = JSON.parse(readFileSync(join(dir, "index.json"), "utf8"));
  const manifest = JSON.parse(
    readFileSync(join(dir, "blobs", "sha256", index.manifests[0].digest.slice(7)), "utf8"),
  );
  const blobPath = join(dir, "blobs", "sha256", manifest.layers[2].digest.slice(7));
  const bytes = readFileSync(blobPath);
  bytes[bytes.length - 9] = (bytes[bytes.length - 9] as number) ^ 0xff; // inside the gzip trailer's CRC: the tar still reads
  writeFileSync(blobPath, bytes);
  await assert.rejects(scanImage(await openOciLayout(dir, "x86_64")), /layer 3 of 3|hash to/);
});

test("gpuprep scan image.tar --target dgx-spark: the CLI's verdicts, and an index without the target's platform", async () => {
  const result = await runCliAsync([
    "scan",
    dockerSave(),
    "--target",
    "dgx-spark",
    "--arch",
    "aarch64",
    "--json",
  ]);
  // The legacy archive has no platform to pick: it is read as it is.
  assert.equal(result.code, 1, result.stderr);
  const json = JSON.parse(result.stdout);
  const verdicts = Object.fromEntries(
    json.libraries.map((l: { path: string; verdict: { how: string } }) => [l.path, l.verdict.how]),
  );
  assert.deepEqual(verdicts, {
    "opt/cuda/lib/libsm90.so": "none",
    "opt/ext/libsm120ptx.so": "sass",
    "opt/more/libptx80-link.so": "ptx-jit",
    "opt/more/libptx80.so": "ptx-jit",
  });
  assert.deepEqual(json.sources[0].removed, ["opt/cuda/lib/libsm100a.so", "opt/ext/libold.so"]);
  const text = await runCliAsync(["scan", dockerSave(), "--gpu", "sm_90"]);
  assert.match(
    text.stdout,
    /removed by a later layer \(not in the image\): opt\/cuda\/lib\/libsm100a\.so, opt\/ext\/libold\.so/,
  );
  const onlyArm = ociLayout({ arm64: [base] });
  const refused = await runCliAsync(["scan", onlyArm, "--gpu", "sm_90", "--arch", "x86_64"]);
  assert.equal(refused.code, 2);
  assert.match(refused.stderr, /no linux\/amd64 image in the index \(it has linux\/arm64\)/);
  const notImage = join(root, "not-an-image.tar");
  execFileSync("tar", ["-C", join(root, "base"), "-cf", notImage, "."]);
  const bad = await runCliAsync(["scan", notImage, "--gpu", "sm_90"]);
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /not an image archive gpuprep reads \(neither manifest\.json nor index\.json/);
});
