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
