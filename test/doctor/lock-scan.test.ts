/**
 * doctor --fetch (issue 25 item 2): the wheels a project's lock pins, served by a loopback HTTP
 * server, read before anything is installed and judged for the machine of a real snapshot (the
 * H100 capture: x86_64, Python 3.12, compute capability 9.0). The wheels are real zips around the
 * nvcc 13.0 builds of test/fixtures/wheels. Also: nothing is fetched without the flag, a server that
 * does not answer is a note (exit code unchanged), and a lock's wheels on disk are read by a live
 * doctor on Debian's python without the flag.
 */
import { test, after } from "node:test";
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { runCliAsync as runCli } from "../remote/cli-async.js";
import { startServer, type TestServer } from "../support/http-server.js";
import { makeWheel, type WheelSpec } from "../remote/wheels.js";
import { capturePath, derive, onH100, onRtx5090 } from "./captures.js";

const H100 = capturePath("h100-healthy");
const dir = mkdtempSync(join(tmpdir(), "gpuprep-doctor-lock-"));
const wheels = join(dir, "wheels");
const sha = (path: string) => createHash("sha256").update(readFileSync(path)).digest("hex");

const kit = (name: string, lib: string): WheelSpec => ({
  name,
  version: "1.0",
  tag: "cp312-cp312-manylinux_2_28_x86_64",
  libs: { [`${name}/${lib}`]: lib },
});
// sm_100a only: nothing an H100 runs. sm_90: native. compute_80 PTX only: JIT.
const blackwellOnly = makeWheel(wheels, kit("bwkit", "libsm100a.so"));
const hopper = makeWheel(wheels, kit("hopperkit", "libsm90.so"));
const ptxOnly = makeWheel(wheels, kit("jitkit", "libptx80.so"));
const helper = makeWheel(wheels, { name: "helper", version: "2.0", tag: "py3-none-any", libs: {} });

const servers: TestServer[] = [];
after(async () => {
  for (const server of servers) await server.close();
});

function lockEntry(name: string, base: string, path: string): string {
  return `[[package]]
name = "${name}"
version = "${name === "helper" ? "2.0" : "1.0"}"
source = { registry = "${base}/simple" }
wheels = [{ url = "${base}/${basename(path)}", hash = "sha256:${sha(path)}", size = ${readFileSync(path).length} }]
`;
}

/** A uv project whose uv.lock pins these wheels at `base`. */
function project(name: string, base: string, pinned: [string, string][]): string {
  const root = join(dir, name);
  mkdirSync(root, { recursive: true });
  writeFileSync(
    join(root, "pyproject.toml"),
    `[project]\nname = "${name}"\nversion = "0.1.0"\nrequires-python = ">=3.12"\ndependencies = [${pinned.map(([n]) => `"${n}"`).join(", ")}]\n`,
  );
  writeFileSync(
    join(root, "uv.lock"),
    `version = 1\nrequires-python = ">=3.12"\n\n${pinned.map(([n, p]) => lockEntry(n, base, p)).join("\n")}`,
  );
  return root;
}

async function doctor(projectDir: string, ...flags: string[]) {
  const result = await runCli(["doctor", "--from", H100, "--project", projectDir, "--json", ...flags]);
  assert.ok(result.code === 0 || result.code === 1, `exit ${result.code}: ${result.stderr}`);
  return { code: result.code, json: JSON.parse(result.stdout), stderr: result.stderr };
}

interface FindingJson {
  ruleId: string;
  severity: string;
  message: string;
  evidence: { label: string; value: string }[];
}
const lockFindings = (json: { findings: FindingJson[] }) =>
  json.findings.filter((f) => f.ruleId === "locked-wheel-arch-missing");

test("doctor --fetch: a locked wheel with only sm_100a code is an error on the H100, read over HTTP Range", async () => {
  const server = await startServer(wheels, { ranges: true });
  servers.push(server);
  const root = project("firing", server.url, [
    ["bwkit", blackwellOnly],
    ["helper", helper],
  ]);
  const { code, json } = await doctor(root, "--fetch");
  assert.equal(code, 1);
  const [finding, ...rest] = lockFindings(json);
  assert.equal(rest.length, 0);
  assert.equal(finding!.severity, "error");
  assert.match(
    finding!.message,
    /uv\.lock pins bwkit-1\.0-.*\.whl: 1 of its 1 CUDA library has no code that runs on NVIDIA H100/,
  );
  assert.ok(
    finding!.evidence.some((e) => e.label === "bwkit/libsm100a.so" && e.value === "sm_100a -> cannot run"),
  );
  const lock = json.facts.lockScan.locks[0];
  assert.equal(lock.kind, "uv.lock");
  const bwkit = lock.packages.find((p: { name: string }) => p.name === "bwkit");
  assert.equal(bwkit.status, "scanned");
  assert.equal(bwkit.transfer, "ranges");
  assert.ok(bwkit.bytesFetched > 0 && bwkit.bytesFetched === lock.bytesFetched, JSON.stringify(bwkit));
  assert.deepEqual(bwkit.libraries[0].sass, ["sm_100a"]);
  // The pure-Python wheel is not fetched.
  assert.match(lock.packages.find((p: { name: string }) => p.name === "helper").reason, /pure Python/);
  assert.ok(!server.requests.some((r) => r.path.includes("helper")));
  assert.deepEqual(json.facts.lockScan.platform, {
    arch: "x86_64",
    python: "3.12",
    glibc: "2.39",
    glibcAssumed: true,
  });
});

test("doctor --fetch: sm_90 SASS is silent on the H100; compute_80 PTX only is a warning", async () => {
  const server = await startServer(wheels, { ranges: false });
  servers.push(server);
  const silent = await doctor(project("silent", server.url, [["hopperkit", hopper]]), "--fetch");
  assert.equal(silent.code, 0);
  assert.deepEqual(lockFindings(silent.json), []);
  assert.equal(silent.json.facts.lockScan.locks[0].packages[0].transfer, "stream");
  const jit = await doctor(project("jit", server.url, [["jitkit", ptxOnly]]), "--fetch");
  assert.equal(jit.code, 0);
  assert.deepEqual(
    lockFindings(jit.json).map((f) => f.severity),
    ["warning"],
  );
  assert.match(lockFindings(jit.json)[0]!.message, /only by JIT-compiling PTX/);
});

test("doctor without --fetch downloads nothing and says nothing about the lock", async () => {
  const server = await startServer(wheels, { ranges: true });
  servers.push(server);
  const root = project("offline", server.url, [["bwkit", blackwellOnly]]);
  const { code, json } = await doctor(root);
  assert.equal(code, 0);
  assert.equal(server.requests.length, 0);
  assert.equal(json.facts.lockScan, undefined);
  assert.deepEqual(lockFindings(json), []);
});

/** A loopback port nothing listens on: bound, then closed. */
async function closedPort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, "127.0.0.1", resolve));
  const port = (probe.address() as { port: number }).port;
  await new Promise((resolve) => probe.close(resolve));
  return port;
}

test("doctor --fetch with the lock's server down: an info note naming the package, the exit code unchanged", async () => {
  const root = project("unreachable", `http://127.0.0.1:${await closedPort()}`, [["bwkit", blackwellOnly]]);
  const { code, json } = await doctor(root, "--fetch");
  assert.equal(code, 0);
  const [note] = lockFindings(json);
  assert.equal(note!.severity, "info");
  assert.match(
    note!.message,
    /1 of the wheels uv\.lock pins could not be reached, so their CUDA code was not checked/,
  );
  assert.ok(note!.evidence.some((e) => e.label === "bwkit (unreachable)" && /127\.0\.0\.1/.test(e.value)));
  assert.equal(json.facts.lockScan.locks[0].packages[0].status, "unreachable");
  const text = await runCli(["doctor", "--from", H100, "--project", root, "--fetch"]);
  assert.equal(text.code, 0, text.stderr);
  assert.match(
    text.stdout,
    /lock {4}uv\.lock: 0 wheels read for x86_64, Python 3\.12, 1 not reachable; 0 bytes fetched/,
  );
});

test("a live doctor on Debian's python reads a lock's wheels on disk without --fetch", async () => {
  const root = join(dir, "on-disk");
  mkdirSync(root, { recursive: true });
  const local = makeWheel(join(root, "wheels"), {
    name: "diskkit",
    version: "1.0",
    tag: "py3-none-manylinux_2_17_x86_64",
    libs: { "diskkit/libsm100a.so": "libsm100a.so" },
  });
  writeFileSync(
    join(root, "pyproject.toml"),
    `[project]\nname = "disk"\nversion = "0.1.0"\ndependencies = ["diskkit"]\n`,
  );
  writeFileSync(
    join(root, "uv.lock"),
    `version = 1\n\n[[package]]\nname = "diskkit"\nversion = "1.0"\nsource = { registry = "https://example.invalid/simple" }\nwheels = [{ path = "wheels/${basename(local)}", hash = "sha256:${sha(local)}" }]\n`,
  );
  const result = await runCli([
    "doctor",
    "--python",
    "/usr/bin/python3",
    "--fast",
    "--project",
    root,
    "--json",
  ]);
  assert.ok(result.code === 0 || result.code === 1, result.stderr);
  const scan = JSON.parse(result.stdout).facts.lockScan;
  assert.equal(scan.fetch, false);
  assert.match(scan.platform.glibc, /^2\.\d+$/);
  assert.equal(scan.platform.glibcAssumed, false);
  const pkg = scan.locks[0].packages[0];
  assert.equal(pkg.status, "scanned");
  assert.equal(pkg.transfer, "file");
  assert.equal(pkg.bytesFetched, 0);
  assert.deepEqual(pkg.libraries[0].sass, ["sm_100a"]);
});

/**
 * torch from the cu124 index, locked by uv.lock: the knowledge base says cu124 has sm_90 and no
 * sm_120. The locked wheel here is a real zip named as that torch wheel around one nvcc-built
 * library (sm_100a only, or sm_120 + PTX), so the wheel and the knowledge base disagree: the wheel's
 * verdict must win, both ways, and say so.
 */
function torchProject(name: string, base: string, lib: string): string {
  const root = join(dir, name);
  const whl = makeWheel(join(dir, `${name}-wheels`), {
    name: "torch",
    version: "2.5.1+cu124",
    tag: "cp311-cp311-linux_x86_64",
    libs: { "torch/lib/libtorch_cuda.so": lib },
  });
  mkdirSync(root, { recursive: true });
  writeFileSync(
    join(root, "pyproject.toml"),
    `[project]
name = "${name}"
version = "0.1.0"
dependencies = ["torch==2.5.1"]

[tool.uv.sources]
torch = { index = "pytorch-cu124" }

[[tool.uv.index]]
name = "pytorch-cu124"
url = "https://download.pytorch.org/whl/cu124"
explicit = true
`,
  );
  writeFileSync(
    join(root, "uv.lock"),
    `version = 1

[[package]]
name = "torch"
version = "2.5.1+cu124"
source = { registry = "https://download.pytorch.org/whl/cu124" }
wheels = [{ url = "${base}/${name}-wheels/${basename(whl)}", hash = "sha256:${sha(whl)}" }]
`,
  );
  return root;
}

function snapshot(name: string, patch: Parameters<typeof derive>[1]): string {
  const path = join(dir, `${name}.json`);
  writeFileSync(path, JSON.stringify(derive("torch-pinned-project", patch)));
  return path;
}

test("the scanned torch wheel's verdict replaces the knowledge base's prediction, both ways", async () => {
  const server = await startServer(dir, { ranges: true });
  servers.push(server);
  const run = async (facts: string, root: string, ...flags: string[]) => {
    const result = await runCli(["doctor", "--from", facts, "--project", root, "--json", ...flags]);
    const json = JSON.parse(result.stdout) as { findings: FindingJson[] };
    return { code: result.code, ids: json.findings.map((f) => `${f.ruleId}:${f.severity}`), json };
  };
  // H100: the knowledge base's cu124 runs there, the locked wheel (sm_100a) does not.
  const h100 = snapshot("h100", onH100);
  const blackwell = torchProject("torch-sm100a", server.url, "libsm100a.so");
  const kbOnly = await run(h100, blackwell);
  assert.ok(!kbOnly.ids.some((id) => /arch-not-covered|locked-wheel/.test(id)), kbOnly.ids.join());
  const scanned = await run(h100, blackwell, "--fetch");
  assert.equal(scanned.code, 1);
  assert.ok(scanned.ids.includes("locked-wheel-arch-missing:error"), scanned.ids.join());
  const finding = lockFindings(scanned.json)[0]!;
  assert.match(
    finding.message,
    /replaces the knowledge base's prediction for uv sync \(torch 2\.5 cu124 wheel \(linux-x86_64\)\)/,
  );
  // RTX 5090: the knowledge base says cu124 has no sm_120; this locked wheel has sm_120 SASS.
  const rtx = snapshot("rtx5090", onRtx5090);
  const sm120 = torchProject("torch-sm120", server.url, "libsm120ptx.so");
  const kbSays = await run(rtx, sm120);
  assert.ok(kbSays.ids.includes("project-torch-arch-not-covered:error"), kbSays.ids.join());
  const wheelSays = await run(rtx, sm120, "--fetch");
  assert.ok(!wheelSays.ids.some((id) => /arch-not-covered|locked-wheel/.test(id)), wheelSays.ids.join());
});
