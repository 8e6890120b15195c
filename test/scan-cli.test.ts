import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync, spawnSync } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const cli = fileURLToPath(new URL("../src/cli/main.js", import.meta.url));
const fixtures = fileURLToPath(new URL("../../test/fixtures/fatbin", import.meta.url));

function gpuprep(...args: string[]) {
  const result = spawnSync(process.execPath, [cli, "scan", ...args], {
    encoding: "utf8",
    timeout: 30_000,
    env: { ...process.env, NO_COLOR: "1" },
  });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

test("scan --json: per-library targets and the verdict for the named GPU", () => {
  const result = gpuprep(fixtures, "--gpu", "dgx spark", "--json");
  assert.equal(result.code, 1, result.stderr); // some fixtures cannot run on 12.1
  const report = JSON.parse(result.stdout);
  assert.equal(report.schema, "gpuprep.scan");
  assert.equal(report.schemaVersion, 1);
  assert.equal(report.device.computeCapability, "12.1");
  const byName = new Map(report.libraries.map((l: { path: string }) => [l.path.split("/").pop(), l]));
  const verdict = (name: string) => (byName.get(name) as { verdict: { how: string } }).verdict.how;
  assert.equal(verdict("sm_120+sm_121.so"), "sass");
  assert.equal(verdict("compute_75.so"), "ptx-jit");
  assert.equal(verdict("sm_90a.so"), "none");
  assert.equal(verdict("sm_100f.so"), "none");
});

test("scan text: exit 0 when everything can run, with the PTX JIT cache advice", () => {
  const result = gpuprep(`${fixtures}/compute_75.so`, `${fixtures}/sm_90+compute_90.so`, "--gpu", "sm_90");
  assert.equal(result.code, 0, result.stderr);
  assert.match(result.stdout, /sm_90 compute_90 {2}-> {2}native via sm_90/);
  assert.match(result.stdout, /CUDA_CACHE_MAXSIZE/);
});

test("scan: bad input is one line and a hint, exit 2", () => {
  for (const args of [["/no/such/path"], ["--gpu", "rtx 9999", fixtures], ["--bogus"], []]) {
    const result = gpuprep(...args);
    assert.equal(result.code, 2, args.join(" "));
    assert.match(result.stderr, /^gpuprep: error: .+\n {2}hint: .+\n$/);
  }
});

test("scan: when no input could be read, exit 2 with each file's reason (was 0)", () => {
  const dir = mkdtempSync(join(tmpdir(), "gpuprep-scan-unreadable-"));
  execFileSync("mkfifo", [join(dir, "libfifo.so")]);
  writeFileSync(join(dir, "libtext.so"), "INPUT(-lfoo)\n");
  const result = gpuprep(join(dir, "libfifo.so"), join(dir, "libtext.so"), "--gpu", "sm_90", "--json");
  assert.equal(result.code, 2, result.stderr);
  const report = JSON.parse(result.stdout);
  const errors = report.libraries.map((l: { error: string }) => l.error).sort();
  assert.deepEqual(errors, ["not-elf: not an ELF file or ar archive", "unreadable: not a regular file"]);
  // One readable library among them: the usual verdict decides.
  const mixed = gpuprep(join(dir, "libfifo.so"), `${fixtures}/compute_75.so`, "--gpu", "sm_90");
  assert.equal(mixed.code, 0, mixed.stderr);
});

const factsFixtures = fileURLToPath(new URL("../../test/fixtures/facts", import.meta.url));
const smiCapture = fileURLToPath(new URL("../../test/fixtures/nvidia-smi/h100", import.meta.url));

test("scan with no --gpu judges for the GPU nvidia-smi lists (the H100 capture, replayed)", () => {
  const dir = mkdtempSync(join(tmpdir(), "gpuprep-scan-gpus-"));
  writeFileSync(
    join(dir, "nvidia-smi"),
    `#!/bin/sh\ncase "$1" in --query-gpu=*) exec cat ${smiCapture}/query.csv;; *) exec cat ${smiCapture}/nvidia-smi.txt;; esac\n`,
    { mode: 0o755 },
  );
  const result = spawnSync(process.execPath, [cli, "scan", `${fixtures}/sm_90a.so`, "--json", "-v"], {
    encoding: "utf8",
    timeout: 30_000,
    env: { ...process.env, PATH: `${dir}:${process.env["PATH"] ?? ""}` },
  });
  assert.equal(result.status, 0, result.stderr);
  assert.match(result.stderr, /ran nvidia-smi '--query-gpu=index,name,/);
  const report = JSON.parse(result.stdout);
  assert.deepEqual(report.device, { label: "NVIDIA H100 80GB HBM3 (local)", computeCapability: "9.0" });
  assert.equal(report.libraries[0].verdict.how, "sass");
});

test("scan --from: the GPU of a saved facts snapshot, no nvidia-smi run", () => {
  const h100 = gpuprep(
    `${fixtures}/sm_90a.so`,
    `${fixtures}/compute_75.so`,
    "--from",
    `${factsFixtures}/h100-healthy.json`,
    "--json",
    "-v",
  );
  assert.doesNotMatch(h100.stderr, /nvidia-smi/);
  assert.equal(h100.code, 0, h100.stderr);
  const report = JSON.parse(h100.stdout);
  assert.equal(report.device.computeCapability, "9.0");
  assert.match(report.device.label, /^NVIDIA H100 80GB HBM3 \(from .*h100-healthy\.json\)$/);
  // A machine without a GPU gives nothing to judge for: said, not guessed.
  const cpu = gpuprep(fixtures, "--from", `${factsFixtures}/debian-torch-cpu.json`);
  assert.equal(cpu.code, 2);
  assert.match(
    cpu.stderr,
    /^gpuprep: error: scan: the snapshot .*debian-torch-cpu\.json has no GPU with a compute capability\n {2}hint: give the GPU with --gpu/,
  );
  const both = gpuprep(fixtures, "--from", `${factsFixtures}/h100-healthy.json`, "--gpu", "sm_90");
  assert.equal(both.code, 2);
  assert.match(both.stderr, /--gpu and --from both name the GPU/);
  const notFacts = gpuprep(fixtures, "--from", `${fixtures}/compute_75.so`);
  assert.equal(notFacts.code, 2);
  assert.match(notFacts.stderr, /^gpuprep: error: .+\n {2}hint: .+\n$/);
});

test("scan --python: the interpreter's import directories, asked through the local transport", () => {
  const result = gpuprep("--python", "/usr/bin/python3", "--gpu", "sm_90", "--json");
  assert.ok(result.code === 0 || result.code === 1, result.stderr);
  const report = JSON.parse(result.stdout);
  // Debian's python3 imports from dist-packages; the standard library is not searched.
  assert.ok(report.filesExamined > 0, "no file examined");
  const missing = gpuprep("--python", "/no/such/python", "--gpu", "sm_90");
  assert.equal(missing.code, 2);
  assert.match(
    missing.stderr,
    /^gpuprep: error: scan: cannot ask \/no\/such\/python for its import directories/,
  );
});

test("a plain scan loads neither the knowledge base nor zod (scan's 0.2 s budget for libtorch_cuda.so)", () => {
  // A module-resolution hook that names every module gpuprep loads, on stderr.
  const dir = mkdtempSync(join(tmpdir(), "gpuprep-scan-modules-"));
  writeFileSync(
    join(dir, "hook.mjs"),
    "export async function resolve(s, c, next) { const r = await next(s, c); process.stderr.write(`loaded ${r.url}\\n`); return r; }\n",
  );
  writeFileSync(
    join(dir, "register.mjs"),
    `import { register } from "node:module";\nregister(${JSON.stringify(`file://${dir}/hook.mjs`)});\n`,
  );
  const run = (...args: string[]) =>
    spawnSync(process.execPath, ["--import", join(dir, "register.mjs"), cli, "scan", ...args], {
      encoding: "utf8",
      timeout: 30_000,
    });
  const plain = run(`${fixtures}/compute_75.so`, "--json");
  assert.equal(plain.status, 0, plain.stderr);
  assert.match(plain.stderr, /loaded .*\/fatbin\/index\.js/); // the hook saw the modules
  assert.doesNotMatch(plain.stderr, /\/kb\/index\.js|\/zod\//);
  // A GPU by name needs the knowledge base: the check sees it when it is loaded.
  const named = run(`${fixtures}/compute_75.so`, "--gpu", "h100", "--json");
  assert.match(named.stderr, /loaded .*\/kb\/index\.js/);
});
