/**
 * Every file gpuprep reads goes through util/safe-read (issue 28 medium 5): a FIFO never hangs,
 * /dev/zero or a huge file is refused at its cap, a file that is not JSON is never quoted back,
 * and the Hugging Face cache is read only inside itself. Each case is the review's repro, run
 * through the CLI a user types.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, symlinkSync, truncateSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runCli } from "../support/cli.js";

/** A file standing in for /etc/shadow: its content must never reach the output. */
const SECRET = "root:$6$SECRETHASH$abcdefghij:19000:0:99999:7:::\n";

function fresh(): string {
  return mkdtempSync(join(tmpdir(), "gpuprep-readers-"));
}

function assertRefused(
  result: { code: number | null; stdout: string; stderr: string },
  pattern: RegExp,
): void {
  assert.equal(result.code, 2, `exit ${String(result.code)}: ${result.stderr}`);
  assert.match(result.stderr, pattern);
  assert.equal(result.stderr.trim().split("\n").length <= 2, true, result.stderr);
  assert.doesNotMatch(result.stderr, /internal error|\n\s+at /);
}

/** No run of 3 or more characters of the secret appears in `text` (no byte of it, in practice). */
function assertNoSecret(text: string): void {
  for (const piece of ["root:", "SECRET", "$6$", "abcdefghij", "99999"])
    assert.ok(!text.includes(piece), `${piece} echoed in: ${text}`);
}

const memory = (model: string, env: Record<string, string> = {}, cwd?: string) =>
  runCli(["memory", "--model", model, "--batch", "1"], {
    timeout: 30_000,
    env,
    ...(cwd ? { cwd } : {}),
  });

test("memory --model: a FIFO config.json is refused at once, not waited on", () => {
  const dir = fresh();
  execFileSync("mkfifo", [join(dir, "config.json")]);
  const result = memory(join(dir, "config.json"));
  assert.notEqual(result.code, null, "memory hung on a FIFO");
  assertRefused(result, /FIFO/);
});

test("memory --model: /dev/zero and a 300 MB config are refused at the cap, not read whole", () => {
  const dir = fresh();
  symlinkSync("/dev/zero", join(dir, "zero.json"));
  assertRefused(memory(join(dir, "zero.json")), /is a device/);
  const big = join(dir, "big.json");
  writeFileSync(big, "");
  truncateSync(big, 300 * 1024 * 1024);
  const started = Date.now();
  assertRefused(memory(big), /larger than 16 MiB/);
  assert.ok(Date.now() - started < 20_000);
});

test("memory --model: a config.json linked to a secret is not quoted in the error", () => {
  const dir = fresh();
  writeFileSync(join(dir, "shadow"), SECRET);
  symlinkSync(join(dir, "shadow"), join(dir, "config.json"));
  const result = memory(join(dir, "config.json"));
  assertRefused(result, /is not valid JSON \(unexpected character\)/);
  assertNoSecret(result.stdout + result.stderr);
});

test("memory --model NAME: the HF cache's refs/main cannot lead outside the cache", () => {
  const home = fresh();
  const model = join(home, "hub", "models--org--tiny");
  mkdirSync(join(model, "refs"), { recursive: true });
  mkdirSync(join(model, "snapshots"), { recursive: true });
  // refs/main names a "revision" that climbs out to a config planted elsewhere.
  const elsewhere = join(home, "elsewhere");
  mkdirSync(elsewhere);
  writeFileSync(join(elsewhere, "config.json"), '{"model_type": "planted"}');
  writeFileSync(join(model, "refs", "main"), "../../../elsewhere");
  const result = memory("org/tiny", { HF_HOME: home });
  assertRefused(result, /neither a path nor a model in the local Hugging Face cache/);
  assert.doesNotMatch(result.stdout + result.stderr, /planted/);
});

test("memory --model NAME: a snapshot's config.json linked outside the cache is refused; one into its blobs is read", () => {
  const home = fresh();
  const rev = "0123456789abcdef0123456789abcdef01234567";
  const model = join(home, "hub", "models--org--tiny");
  mkdirSync(join(model, "refs"), { recursive: true });
  mkdirSync(join(model, "snapshots", rev), { recursive: true });
  mkdirSync(join(model, "blobs"));
  writeFileSync(join(model, "refs", "main"), `${rev}\n`);
  writeFileSync(join(home, "shadow"), SECRET);
  symlinkSync(join(home, "shadow"), join(model, "snapshots", rev, "config.json"));
  const outside = memory("org/tiny", { HF_HOME: home });
  assertRefused(outside, /leads outside/);
  assertNoSecret(outside.stdout + outside.stderr);

  // The layout huggingface_hub writes: snapshots/<rev>/config.json -> ../../blobs/<hash>.
  writeFileSync(join(model, "blobs", "b1"), '{"model_type": "no-such-family"}');
  execFileSync("ln", ["-sfn", "../../blobs/b1", join(model, "snapshots", rev, "config.json")]);
  const inside = memory("org/tiny", { HF_HOME: home });
  assert.doesNotMatch(inside.stderr, /leads outside|cannot read/, inside.stderr);
});

test("the KB overlay: a FIFO is refused at once, a secret linked there is not quoted", () => {
  const cache = fresh();
  mkdirSync(join(cache, "gpuprep"));
  const overlay = join(cache, "gpuprep", "kb-overlay.json");
  execFileSync("mkfifo", [overlay]);
  const fifo = runCli(["kb", "gpu", "H100"], { env: { XDG_CACHE_HOME: cache }, timeout: 30_000 });
  assert.notEqual(fifo.code, null, "kb hung on a FIFO overlay");
  assertRefused(fifo, /FIFO/);
  execFileSync("rm", [overlay]);
  writeFileSync(join(cache, "shadow"), SECRET);
  symlinkSync(join(cache, "shadow"), overlay);
  const linked = runCli(["kb", "gpu", "H100"], { env: { XDG_CACHE_HOME: cache }, timeout: 30_000 });
  assertRefused(linked, /overlay .* is not valid JSON/);
  assertNoSecret(linked.stdout + linked.stderr);
});

function kubeconfig(dir: string, user: string): string {
  const path = join(dir, "kubeconfig");
  writeFileSync(
    path,
    [
      "apiVersion: v1",
      "clusters: [{name: c, cluster: {server: 'https://127.0.0.1:1'}}]",
      "contexts: [{name: x, context: {cluster: c, user: u}}]",
      "current-context: x",
      `users: [{name: u, user: ${user}}]`,
      "",
    ].join("\n"),
  );
  return path;
}

const fleetKube = (config: string) =>
  runCli(["fleet", "doctor", "--kube", "--kubeconfig", config, "--image", "python:3.12", "--fast"], {
    timeout: 30_000,
  });

test("fleet --kube: the kubeconfig and its token/cert files go through the one reader", () => {
  const dir = fresh();
  const fifo = join(dir, "kubeconfig.fifo");
  execFileSync("mkfifo", [fifo]);
  const hungConfig = fleetKube(fifo);
  assert.notEqual(hungConfig.code, null, "fleet hung on a FIFO kubeconfig");
  assertRefused(hungConfig, /FIFO/);

  symlinkSync("/dev/zero", join(dir, "token"));
  assertRefused(fleetKube(kubeconfig(dir, `{tokenFile: ${join(dir, "token")}}`)), /is a device/);
  execFileSync("mkfifo", [join(dir, "cert.pem")]);
  const cert = fleetKube(kubeconfig(dir, `{client-certificate: ${join(dir, "cert.pem")}}`));
  assert.notEqual(cert.code, null, "fleet hung on a FIFO certificate");
  assertRefused(cert, /FIFO/);

  const broken = join(dir, "broken");
  writeFileSync(broken, `a: [\n${SECRET}`);
  const yaml = fleetKube(broken);
  assertRefused(yaml, /is not valid YAML/);
  assertNoSecret(yaml.stdout + yaml.stderr);
});

test("fleet collect: a FIFO job file or output, /dev/zero as output, a non-JSON job file", () => {
  const dir = fresh();
  const job = join(dir, "gpuprep-fleet-42.json");
  execFileSync("mkfifo", [job]);
  const collect = () => runCli(["fleet", "collect", "42", "--job-dir", dir], { timeout: 30_000 });
  const fifoJob = collect();
  assert.notEqual(fifoJob.code, null, "collect hung on a FIFO job file");
  assertRefused(fifoJob, /FIFO/);

  execFileSync("rm", [job]);
  writeFileSync(join(dir, "shadow"), SECRET);
  symlinkSync(join(dir, "shadow"), job);
  const linked = collect();
  assertRefused(linked, /is not valid JSON/);
  assertNoSecret(linked.stdout + linked.stderr);

  execFileSync("rm", [job]);
  const output = join(dir, "out.fifo");
  execFileSync("mkfifo", [output]);
  const meta = {
    schema: "gpuprep.fleet.job",
    nonce: "ab".repeat(16),
    output,
    nodeTimeoutSeconds: 60,
    down: [],
  };
  writeFileSync(job, JSON.stringify(meta));
  const fifoOutput = collect();
  assert.notEqual(fifoOutput.code, null, "collect hung on a FIFO output");
  assertRefused(fifoOutput, /FIFO/);
  writeFileSync(job, JSON.stringify({ ...meta, output: "/dev/zero" }));
  assertRefused(collect(), /is a device/);
});

test("init: a .gpuprep/manifest.json that is not JSON is named by position, never quoted", () => {
  const dir = fresh();
  writeFileSync(join(dir, "requirements.txt"), "numpy\n");
  mkdirSync(join(dir, ".gpuprep"));
  writeFileSync(join(dir, ".gpuprep", "manifest.json"), SECRET);
  const result = runCli(
    ["init", "--project", dir, "--target", "h100", "--driver", "580.95.05", "--strategy", "container"],
    { timeout: 60_000 },
  );
  assertRefused(result, /manifest\.json is not valid JSON \(unexpected character\)/);
  assertNoSecret(result.stdout + result.stderr);
});
