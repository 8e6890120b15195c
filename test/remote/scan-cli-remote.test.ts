/**
 * `gpuprep scan` of what is not installed, as a user runs it: a wheel URL on a loopback server
 * (with and without Range requests), uv.lock / pylock.toml / requirements files whose wheels live
 * on that server, a PEP 691 (JSON) and a PEP 503 (HTML) index, and PEP 825 variant wheels. The
 * wheels are real zips around nvcc 13.0 builds (test/fixtures/wheels).
 */
import { test, after } from "node:test";
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { mkdtempSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import type { IncomingMessage, ServerResponse } from "node:http";
import { runCliAsync as runCli } from "./cli-async.js";
import { startServer, type TestServer } from "../support/http-server.js";
import { makeWheel, MIXED_PACKAGE, type WheelSpec } from "./wheels.js";

const dir = mkdtempSync(join(tmpdir(), "gpuprep-scan-remote-"));
const wheels = join(dir, "wheels");
const mixed = makeWheel(wheels, MIXED_PACKAGE);
const sha = (path: string) => createHash("sha256").update(readFileSync(path)).digest("hex");

// One project, "cudakit" 1.0, as an index publishes it: an x86_64 wheel with sm_90 only, an aarch64
// wheel with sm_120 + PTX (which a GB10 runs), and a pure-Python helper.
const kit = (arch: string, lib: string): WheelSpec => ({
  name: "cudakit",
  version: "1.0",
  tag: `cp312-cp312-manylinux_2_28_${arch}`,
  libs: { [`cudakit/${lib}`]: lib },
});
const kitX86 = makeWheel(wheels, kit("x86_64", "libsm90.so"));
const kitArm = makeWheel(wheels, kit("aarch64", "libsm120ptx.so"));
const helper = makeWheel(wheels, { name: "helper", version: "2.0", tag: "py3-none-any", libs: {} });

/** PEP 691 JSON or PEP 503 HTML for /simple/<project>/, from the wheels folder. */
function indexRoute(format: "json" | "html") {
  return (request: IncomingMessage, response: ServerResponse) => {
    const project = (request.url ?? "").split("/")[2] ?? "";
    const files = readdirSync(wheels).filter((f) => f.replace(/_/g, "-").startsWith(`${project}-`));
    if (format === "json" && /vnd\.pypi\.simple\.v1\+json/.test(String(request.headers.accept))) {
      response.writeHead(200, { "content-type": "application/vnd.pypi.simple.v1+json" });
      response.end(
        JSON.stringify({
          meta: { "api-version": "1.1" },
          name: project,
          files: files.map((f) => ({
            filename: f,
            url: `../../files/${f}`,
            hashes: { sha256: sha(join(wheels, f)) },
          })),
        }),
      );
      return;
    }
    response.writeHead(200, { "content-type": "text/html" });
    response.end(
      `<!DOCTYPE html><html><body>${files.map((f) => `<a href="/files/${encodeURIComponent(f)}#sha256=${sha(join(wheels, f))}" data-requires-python="&gt;=3.9">${f}</a><br/>`).join("\n")}</body></html>`,
    );
  };
}

const servers: TestServer[] = [];
after(async () => {
  for (const server of servers) await server.close();
});

async function serve(ranges: boolean, format: "json" | "html" = "json"): Promise<TestServer> {
  const route = indexRoute(format);
  const routes: Record<string, typeof route> = {};
  for (const project of ["cudakit", "helper", "mixedcuda"]) routes[`/simple/${project}/`] = route;
  const files = await startServer(wheels, { ranges });
  servers.push(files);
  // The index pages and the files on one origin: /simple/... and /files/...
  const server = await startServer(null, {
    ranges,
    routes: {
      ...routes,
      ...Object.fromEntries(
        readdirSync(wheels).map((f) => [
          `/files/${f}`,
          (request: IncomingMessage, response: ServerResponse) => {
            response.writeHead(307, { location: `${files.url}/${encodeURIComponent(f)}` });
            response.end();
          },
        ]),
      ),
    },
  });
  servers.push(server);
  return server;
}

test("a wheel URL judged for sm_121 without installing it: which libraries cannot run, and the bytes fetched", async () => {
  const server = await serve(true);
  const url = `${server.url}/files/${basename(mixed)}`;
  const text = await runCli(["scan", url, "--gpu", "sm_121"]);
  assert.equal(text.code, 1, text.stderr);
  assert.match(text.stdout, /mixedcuda\/lib\/libsm90\.so\n {6}sm_90 {2}-> {2}CANNOT RUN/);
  assert.match(text.stdout, /mixedcuda\/lib\/libsm100a\.so\n {6}sm_100a {2}-> {2}CANNOT RUN/);
  assert.match(text.stdout, /libsm120ptx\.so\n {6}sm_120 compute_120 {2}-> {2}native via sm_120/);
  assert.match(text.stdout, /libptx80\.so\n {6}compute_80 {2}-> {2}ptx-jit via compute_80/);
  const size = readFileSync(mixed).length;
  const fetched = Number(
    /([\d,]+) of ([\d,]+) bytes fetched \(HTTP Range requests\)/.exec(text.stdout)?.[1]?.replace(/,/g, ""),
  );
  assert.ok(fetched > 0 && fetched < size / 10, `fetched ${fetched} of ${size}`);
  const json = JSON.parse((await runCli(["scan", url, "--gpu", "sm_121", "--json"])).stdout);
  assert.equal(json.packages[0].transfer, "ranges");
  assert.equal(json.packages[0].verdict, "none");
  assert.equal(json.sources[0].bytesFetched, json.packages[0].bytesFetched);
});

test("a wheel URL on a server without Range requests: read once, the same verdicts", async () => {
  const server = await serve(false);
  const json = JSON.parse(
    (await runCli(["scan", `${server.url}/files/${basename(mixed)}`, "--gpu", "sm_90", "--json"])).stdout,
  );
  assert.equal(json.packages[0].transfer, "stream");
  assert.equal(json.packages[0].bytesFetched, readFileSync(mixed).length);
  const verdicts = Object.fromEntries(
    json.libraries.map((l: { path: string; verdict: { how: string } }) => [basename(l.path), l.verdict.how]),
  );
  // compute_120 PTX cannot be compiled down to a 9.0 GPU.
  assert.deepEqual(verdicts, {
    "libsm90.so": "sass",
    "libptx80.so": "ptx-jit",
    "libsm100a.so": "none",
    "libsm120ptx.so": "none",
  });
});

test("scan --lock uv.lock --target dgx-spark: the aarch64 wheel of each package, pure Python skipped, markers honoured", async () => {
  const server = await serve(true);
  const files = `${server.url}/files`;
  const lock = join(dir, "uv.lock");
  const wheel = (path: string) =>
    `{ url = "${files}/${basename(path)}", hash = "sha256:${sha(path)}", size = ${readFileSync(path).length} }`;
  writeFileSync(
    lock,
    `version = 1
requires-python = ">=3.12"

[[package]]
name = "cudakit"
version = "1.0"
source = { registry = "${server.url}/simple" }
wheels = [
    ${wheel(kitX86)},
    ${wheel(kitArm)},
]

[[package]]
name = "helper"
version = "2.0"
source = { registry = "${server.url}/simple" }
wheels = [${wheel(helper)}]

[[package]]
name = "mixedcuda"
version = "2.0"
source = { registry = "${server.url}/simple" }
resolution-markers = ["sys_platform == 'win32'"]
wheels = [${wheel(mixed)}]

[[package]]
name = "myproject"
version = "0.1.0"
source = { editable = "." }
`,
  );
  const result = await runCli(["scan", "--lock", lock, "--target", "dgx-spark", "--json"]);
  assert.equal(result.code, 0, result.stderr);
  const json = JSON.parse(result.stdout);
  assert.equal(json.device.computeCapability, "12.1");
  assert.equal(json.target.arch, "aarch64");
  const byName = Object.fromEntries(json.packages.map((p: { name: string }) => [p.name, p]));
  assert.equal(byName.cudakit.filename, basename(kitArm));
  assert.equal(byName.cudakit.verdict, "sass");
  assert.match(byName.helper.skipped, /pure Python/);
  assert.match(byName.mixedcuda.skipped, /markers exclude this machine/);
  assert.match(byName.myproject.skipped, /no wheels locked/);
  // Only the aarch64 wheel was fetched (small enough to come whole with the first range request).
  assert.equal(json.sources[0].bytesFetched, readFileSync(kitArm).length);
  // The same lock for an x86_64 H100: the sm_90 wheel.
  const h100 = JSON.parse(
    (await runCli(["scan", "--lock", lock, "--gpu", "sm_90", "--arch", "x86_64", "--json"])).stdout,
  );
  assert.equal(h100.packages.find((p: { name: string }) => p.name === "cudakit").filename, basename(kitX86));
  // --offline: nothing fetched, said per package.
  const offline = JSON.parse(
    (await runCli(["scan", "--lock", lock, "--target", "dgx-spark", "--offline", "--json"])).stdout,
  );
  assert.match(offline.packages.find((p: { name: string }) => p.name === "cudakit").skipped, /offline/);
});

test("scan --lock pylock.toml: its wheels picked for the target and scanned", async () => {
  const server = await serve(true);
  const lock = join(dir, "pylock.toml");
  writeFileSync(
    lock,
    `lock-version = "1.0"
requires-python = ">=3.12"
created-by = "a test"

[[packages]]
name = "cudakit"
version = "1.0"
index = "${server.url}/simple"
wheels = [
  { name = "${basename(kitX86)}", url = "${server.url}/files/${basename(kitX86)}", hashes = { sha256 = "${sha(kitX86)}" } },
  { name = "${basename(kitArm)}", url = "${server.url}/files/${basename(kitArm)}", hashes = { sha256 = "${sha(kitArm)}" } },
]
`,
  );
  const result = await runCli(["scan", "--lock", lock, "--gpu", "sm_121", "--arch", "x86_64"]);
  assert.equal(result.code, 1, result.stderr);
  assert.match(
    result.stdout,
    new RegExp(`${basename(kitX86).replace(/\./g, "\\.")}: 1 library with CUDA code`),
  );
  assert.match(result.stdout, /cudakit\/libsm90\.so\n {6}sm_90 {2}-> {2}CANNOT RUN/);
});

test("scan --lock requirements.txt with --index-url and --hash: the index's pick, refused when the hash pins another file", async () => {
  for (const format of ["json", "html"] as const) {
    const server = await serve(true, format);
    const requirements = join(dir, `requirements-${format}.txt`);
    writeFileSync(
      requirements,
      `--index-url ${server.url}/simple\ncudakit==1.0 \\\n    --hash=sha256:${sha(kitArm)}\nhelper==2.0\n`,
    );
    const json = JSON.parse(
      (await runCli(["scan", "--lock", requirements, "--target", "dgx-spark", "--json"])).stdout,
    );
    const cudakit = json.packages.find((p: { name: string }) => p.name === "cudakit");
    assert.equal(cudakit.filename, basename(kitArm), format);
    assert.equal(cudakit.verdict, "sass");
    assert.equal(cudakit.error, null);
    writeFileSync(requirements, `-i ${server.url}/simple\ncudakit==1.0 --hash=sha256:${"0".repeat(64)}\n`);
    const wrong = JSON.parse(
      (await runCli(["scan", "--lock", requirements, "--target", "dgx-spark", "--json"])).stdout,
    );
    assert.match(wrong.packages[0].skipped, /none of the file's --hash values/, format);
  }
});

test("scan --index URL --package SPEC: PEP 691 and PEP 503 indexes give the same pick", async () => {
  for (const format of ["json", "html"] as const) {
    const server = await serve(true, format);
    const result = await runCli([
      "scan",
      "--index",
      `${server.url}/simple`,
      "--package",
      "cudakit==1.0",
      "--target",
      "dgx-spark",
      "--json",
    ]);
    assert.equal(result.code, 0, result.stderr);
    assert.equal(JSON.parse(result.stdout).packages[0].filename, basename(kitArm), format);
  }
  const server = await serve(true);
  const missing = await runCli([
    "scan",
    "--index",
    `${server.url}/simple`,
    "--package",
    "cudakit==9.9",
    "--gpu",
    "sm_90",
  ]);
  assert.equal(missing.code, 2);
  assert.match(missing.stderr, /^gpuprep: error: cudakit==9\.9: no wheel of cudakit==9\.9 for Python 3\.12/);
});

test("PEP 825: a variant wheel whose sm_arch label promises what its binaries cannot keep is a finding", async () => {
  const variants = join(dir, "variants");
  // Labelled for 10.x with 100_real, built sm_100a only: the NVIDIA provider offers 100_real to a
  // B300 (10.3), where sm_100a cubins do not run (FBGEMM's B300 failure, pytorch/FBGEMM#6151).
  const path = makeWheel(variants, {
    name: "fbgemmish",
    version: "1.0",
    tag: "cp312-cp312-manylinux_2_28_x86_64",
    libs: { "fbgemmish/libsm100a.so": "libsm100a.so" },
    variant: {
      label: "cu130",
      json: {
        $schema: "https://variants-schema.wheelnext.dev/v0.0.3.json",
        "default-priorities": { namespace: ["nvidia"] },
        variants: { cu130: { nvidia: { sm_arch: ["100_real"], cuda_version_lower_bound: ["13.0"] } } },
      },
    },
  });
  const result = await runCli(["scan", path, "--gpu", "sm_100", "--cuda-driver", "13.0", "--json"]);
  assert.equal(result.code, 1, result.stderr);
  const json = JSON.parse(result.stdout);
  assert.equal(json.packages[0].variant.label, "cu130");
  assert.equal(json.packages[0].variant.compatible, true);
  assert.ok(
    json.findings.some(
      (f: { severity: string; message: string }) =>
        f.severity === "error" && /100_real.*10\.3/.test(f.message),
    ),
    JSON.stringify(json.findings),
  );
  // An honest label (sm_100a built, declared 100_real, judged on 10.0 only) with sm_120 code it does not declare.
  const undeclared = makeWheel(variants, {
    name: "undeclared",
    version: "1.0",
    tag: "cp312-cp312-manylinux_2_28_x86_64",
    libs: { "undeclared/libsm120ptx.so": "libsm120ptx.so" },
    variant: {
      label: "cu130",
      json: {
        "default-priorities": { namespace: ["nvidia"] },
        variants: { cu130: { nvidia: { sm_arch: ["90_real"] } } },
      },
    },
  });
  const other = JSON.parse((await runCli(["scan", undeclared, "--gpu", "sm_120", "--json"])).stdout);
  assert.equal(other.packages[0].variant.compatible, false, "a 90_real label does not fit a 12.0 GPU");
  const messages = other.findings.map((f: { message: string }) => f.message).join("\n");
  assert.match(
    messages,
    /declares nvidia :: sm_arch :: 90_real, but .*libsm120ptx\.so has no native code that runs on 9\.0/,
  );
  assert.match(messages, /has sm_120 code, but the label does not declare nvidia :: sm_arch :: 120_real/);
});
