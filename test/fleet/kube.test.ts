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
import { KubeApiError, withThrottleRetry } from "../../src/transports/kube-api.js";
import { nodeWrapperArgv } from "../../src/transports/node-frame.js";
import { restrictedViolations } from "./pod-security.js";
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
    // Four GPUs: its Job asks for all four, so the probe sees every GPU of the node.
    { name: "k1", gpus: 4, labels: gfd("NVIDIA-H100-80GB-HBM3", "580.159.04"), env: { PATH: SYSTEM_PATH } },
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

test("the Job manifest validates against the Kubernetes OpenAPI schema and the restricted profile; broken ones do not", () => {
  const manifest = jobManifest(
    { image: "nvcr.io/nvidia/pytorch:25.10-py3", namespace: "ml" },
    "gpu-7",
    3,
    "0123456789abcdef",
    180,
    nodeWrapperArgv("n", 180, ["python3", "-c", "print(1)"]),
    8,
  );
  assert.doesNotThrow(() => new Job(manifest).validate());
  const pod = (manifest as { spec: { template: { spec: Record<string, unknown> } } }).spec.template.spec;
  assert.deepEqual(
    restrictedViolations(pod),
    [],
    "admitted by a namespace enforcing Pod Security restricted",
  );
  assert.deepEqual(
    (pod["containers"] as Array<{ resources: { limits: Record<string, string> } }>)[0]?.resources.limits,
    { "nvidia.com/gpu": "8" },
    "all of the node's GPUs",
  );
  // The checker sees each control: the manifest gpuprep used to write (no securityContext) breaks four.
  const bare = structuredClone(pod) as {
    securityContext?: unknown;
    containers: Array<{ securityContext?: unknown }>;
  };
  delete bare.securityContext;
  delete bare.containers[0]?.securityContext;
  assert.deepEqual(
    restrictedViolations(bare as Record<string, unknown>).map((v) => v.split(" (")[0]),
    [
      "allowPrivilegeEscalation != false",
      "unrestricted capabilities",
      "runAsNonRoot != true",
      "seccompProfile",
    ],
  );
  const root = structuredClone(pod) as { securityContext: { runAsUser: number } };
  root.securityContext.runAsUser = 0;
  assert.match(restrictedViolations(root).join(), /runAsUser=0/);
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
  for (const doc of docs) assert.doesNotThrow(() => new Job(doc).validate());
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
  assert.equal(standin.gpusAsked.get("k1"), "4", "k1's Job asked for its 4 GPUs");
  assert.equal(standin.gpusAsked.get("k2"), "1");
});

test("a restricted namespace admits the probe's pods; Job creation throttled with 429 is waited out", async () => {
  const restricted = await KubeStandin.start(
    [
      { name: "r1", gpus: 2, labels: {}, env: { PATH: SYSTEM_PATH } },
      { name: "r2", gpus: 2, labels: {}, env: { PATH: SYSTEM_PATH } },
      { name: "r3", gpus: 2, labels: {}, env: { PATH: SYSTEM_PATH } },
    ],
    { restrictedNamespaces: ["ml"], throttleJobCreates: 3 },
  );
  const config = join(work, "restricted-kubeconfig");
  writeFileSync(config, restricted.kubeconfig());
  try {
    const run = await gpuprep(
      [
        "fleet",
        "doctor",
        "--kube",
        "--namespace",
        "ml",
        "--image",
        "x",
        "--fast",
        "--node-timeout",
        "30",
        "--json",
      ],
      { KUBECONFIG: config },
    );
    assert.ok(run.status === 0 || run.status === 1, run.stderr);
    const report = JSON.parse(run.stdout) as FleetReport;
    assert.deepEqual(
      report.nodes.map((n) => [n.node, n.status]),
      [
        ["r1", "ok"],
        ["r2", "ok"],
        ["r3", "ok"],
      ],
      JSON.stringify([...restricted.refused]),
    );
    assert.equal(restricted.refused.size, 0, "no pod refused by the restricted profile");
    assert.equal(
      restricted.requests.filter((r) => r.startsWith("POST")).length,
      6,
      "3 answered 429, each tried again",
    );
  } finally {
    await restricted.stop();
  }
});

test("the 429 backoff: Retry-After is honoured, other errors are final, and it gives up after 6 tries", async () => {
  const waits: number[] = [];
  const sleep = async (ms: number) => void waits.push(ms);
  let calls = 0;
  const throttledTwice = () =>
    ++calls <= 2
      ? Promise.reject(new KubeApiError(429, "429", calls === 1 ? 3 : null))
      : Promise.resolve("ok");
  assert.equal(await withThrottleRetry(throttledTwice, 6, sleep), "ok");
  assert.equal(waits[0], 3000, "Retry-After: 3");
  assert.ok((waits[1] ?? 0) >= 2000 && (waits[1] ?? 0) < 2300, "then 2 s of backoff");
  await assert.rejects(
    withThrottleRetry(() => Promise.reject(new KubeApiError(403, "forbidden")), 6, sleep),
    /forbidden/,
  );
  let tries = 0;
  await assert.rejects(
    withThrottleRetry(() => (tries++, Promise.reject(new KubeApiError(429, "still"))), 6, sleep),
    /still/,
  );
  assert.equal(tries, 6);
});

test("--dry-run needs no kubeconfig, for doctor and validate: the manifests for a placeholder node", async () => {
  for (const sub of ["doctor", "validate"]) {
    const run = await gpuprep(["fleet", sub, "--kube", "--image", "ghcr.io/me/train:1", "--dry-run"], {
      KUBECONFIG: join(work, "none"),
    });
    assert.equal(run.status, 0, run.stderr);
    assert.match(run.stderr, /showing the manifest for a placeholder node NODE/);
    const docs = parseAllDocuments(run.stdout).map((d) => d.toJS() as Record<string, unknown>);
    assert.equal(docs.length, sub === "validate" ? 2 : 1, "validate: the probe's Job and the payload's");
    for (const doc of docs) {
      assert.doesNotThrow(() => new Job(doc).validate());
      assert.deepEqual(
        restrictedViolations(
          (doc as { spec: { template: { spec: Record<string, unknown> } } }).spec.template.spec,
        ),
        [],
      );
    }
  }
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
