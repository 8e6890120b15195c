/**
 * gpuprep fleet --kube against the API stand-in (kube-standin.ts; no real API server can run
 * here): nodes chosen by their labels (GPU Feature Discovery's among them), one Job per node
 * validated against the Kubernetes OpenAPI schema (kubernetes-models), the real probe run per
 * "pod" with the node's own environment, results read back from the pod logs.
 */
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseAllDocuments } from "yaml";
import { Job } from "kubernetes-models/batch/v1";
import { KubeStandin } from "./kube-standin.js";
import { makeNodeEnvironments } from "./slurm-cluster.js";
import { jobManifest } from "../../src/transports/kube.js";
import { nodeWrapperArgv } from "../../src/transports/node-frame.js";
import type { FleetReport } from "../../src/fleet/types.js";

const MAIN = join(import.meta.dirname, "..", "..", "src", "cli", "main.js");
const work = mkdtempSync(join(tmpdir(), "gpuprep-fleet-kube-"));
const SYSTEM_PATH = "/usr/bin:/bin:/usr/sbin:/sbin";
const gfd = (product: string, driver: string) => ({
  "nvidia.com/gpu.present": "true",
  "nvidia.com/gpu.product": product,
  "nvidia.com/gpu.count": "1",
  "nvidia.com/gpu.compute.major": "9",
  "nvidia.com/gpu.compute.minor": "0",
  "nvidia.com/cuda.driver-version.full": driver,
});
let standin: KubeStandin;
let kubeconfig: string;

before(async () => {
  const bins = makeNodeEnvironments(work);
  standin = await KubeStandin.start([
    // GFD says H100 and a driver; this machine has no GPU, so the label mismatch shows on k1.
    { name: "k1", gpus: 1, labels: gfd("NVIDIA-H100-80GB-HBM3", "580.159.04"), env: { PATH: SYSTEM_PATH } },
    { name: "k2", gpus: 1, labels: {}, env: { PATH: `${bins.venvBin}:${SYSTEM_PATH}` } },
    { name: "k3", gpus: 1, labels: {}, env: { PATH: SYSTEM_PATH, CUDA_VISIBLE_DEVICES: "" } },
    { name: "k4", gpus: 1, labels: {}, pendingReason: "ImagePullBackOff" },
    { name: "k5", gpus: 1, labels: {}, ready: false },
    { name: "k6", gpus: 1, labels: {}, env: { PATH: `${bins.hangBin}:${SYSTEM_PATH}` } },
    // No GPU: not selected by default.
    { name: "cpu1", gpus: 0, labels: { "node-role": "cpu" }, env: { PATH: SYSTEM_PATH } },
  ]);
  kubeconfig = join(work, "kubeconfig");
  writeFileSync(kubeconfig, standin.kubeconfig());
});
after(async () => {
  await standin?.stop();
});

/** Async: the stand-in serves from this process, so the CLI must not block our event loop. */
function gpuprep(
  args: string[],
  env: NodeJS.ProcessEnv = {},
): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [MAIN, ...args], {
      env: { ...process.env, KUBECONFIG: kubeconfig, ...env },
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (c: Buffer) => (stdout += c.toString()));
    child.stderr.on("data", (c: Buffer) => (stderr += c.toString()));
    child.on("close", (status) => resolve({ status, stdout, stderr }));
  });
}

test("the Job manifest validates against the Kubernetes OpenAPI schema; a broken one does not", () => {
  const manifest = jobManifest(
    { image: "nvcr.io/nvidia/pytorch:25.10-py3", namespace: "ml" },
    "gpu-7",
    3,
    "0123456789abcdef",
    180,
    nodeWrapperArgv("n", 180, ["python3", "-c", "print(1)"]),
  );
  assert.doesNotThrow(() => new Job(manifest as ConstructorParameters<typeof Job>[0]).validate());
  const broken = structuredClone(manifest) as { spec: { backoffLimit: unknown } };
  broken.spec.backoffLimit = "none";
  assert.throws(
    () => new Job(broken as ConstructorParameters<typeof Job>[0]).validate(),
    /backoffLimit must be integer/,
  );
});

test("--dry-run prints one valid Job per selected GPU node, and creates nothing", async () => {
  const run = await gpuprep(["fleet", "doctor", "--kube", "--image", "ghcr.io/me/train:1", "--dry-run"]);
  assert.equal(run.status, 0, run.stderr);
  const docs = parseAllDocuments(run.stdout).map((d) => d.toJS() as Record<string, unknown>);
  const nodes = docs.map(
    (d) => (d["spec"] as { template: { spec: { nodeName: string } } }).template.spec.nodeName,
  );
  assert.deepEqual(nodes, ["k1", "k2", "k3", "k4", "k5", "k6"]);
  for (const doc of docs)
    assert.doesNotThrow(() => new Job(doc as ConstructorParameters<typeof Job>[0]).validate());
  assert.equal(standin.jobs.size, 0);
  assert.ok(!standin.requests.some((r) => r.startsWith("POST")));
});

test("fleet doctor --kube: per-node results from pod logs, drift, GFD label mismatch, every Job deleted", async () => {
  const run = await gpuprep([
    "fleet",
    "doctor",
    "--kube",
    "--image",
    "ghcr.io/me/train:1",
    "--node-timeout",
    "15",
    "--json",
  ]);
  assert.equal(run.status, 1, run.stderr);
  const report = JSON.parse(run.stdout) as FleetReport;
  assert.deepEqual(Object.fromEntries(report.nodes.map((n) => [n.node, n.status])), {
    k1: "ok",
    k2: "ok",
    k3: "ok",
    k4: "unreachable",
    k5: "down",
    k6: "hung",
  });
  assert.match(report.nodes.find((n) => n.node === "k4")?.reason ?? "", /ImagePullBackOff/);
  const ids = Object.fromEntries(report.fleetFindings.map((f) => [f.ruleId, f.nodes]));
  assert.deepEqual(ids["fleet-torch-drift"], ["k2"]);
  assert.deepEqual(ids["fleet-visible-devices-drift"], ["k3"]);
  assert.deepEqual(ids["fleet-gfd-label-mismatch"], ["k1"]);
  assert.deepEqual(ids["fleet-node-unreachable"], ["k4"]);
  assert.deepEqual(ids["fleet-node-down"], ["k5"]);
  assert.deepEqual(ids["fleet-node-hung"], ["k6"]);
  assert.equal(
    report.nodes.find((n) => n.node === "k1")?.nvidiaLabels?.["nvidia.com/gpu.product"],
    "NVIDIA-H100-80GB-HBM3",
  );
  assert.equal(standin.jobs.size, 0, "every Job is deleted afterwards");
  assert.equal(standin.requests.filter((r) => r.startsWith("POST")).length, 5, "one Job per ready GPU node");
});

test("--selector picks nodes by label; bad credentials or an exec plugin: one line, exit 2", async () => {
  const picked = await gpuprep([
    "fleet",
    "doctor",
    "--kube",
    "--image",
    "x",
    "--selector",
    "node-role=cpu",
    "--dry-run",
  ]);
  assert.equal(picked.status, 0, picked.stderr);
  assert.equal(parseAllDocuments(picked.stdout).length, 1);
  assert.match(picked.stdout, /nodeName: cpu1/);

  const badConfig = join(work, "bad-kubeconfig");
  writeFileSync(badConfig, standin.kubeconfig("wrong-token"));
  const refused = await gpuprep(["fleet", "doctor", "--kube", "--image", "x"], { KUBECONFIG: badConfig });
  assert.equal(refused.status, 2);
  assert.match(
    refused.stderr,
    /^gpuprep: error: the Kubernetes API refused context standin: GET \/api\/v1\/nodes: 401 Unauthorized\n {2}hint: /,
  );

  const execConfig = join(work, "exec-kubeconfig");
  writeFileSync(
    execConfig,
    standin
      .kubeconfig()
      .replace(
        / {4}token: .*/,
        "    exec:\n      command: aws\n      apiVersion: client.authentication.k8s.io/v1beta1",
      ),
  );
  const plugin = await gpuprep(["fleet", "doctor", "--kube", "--image", "x"], { KUBECONFIG: execConfig });
  assert.equal(plugin.status, 2);
  assert.match(plugin.stderr, /authenticates through an exec\/auth-provider plugin/);

  const noImage = await gpuprep(["fleet", "doctor", "--kube"]);
  assert.equal(noImage.status, 2);
  assert.match(noImage.stderr, /needs --image/);
});
