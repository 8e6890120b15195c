/**
 * The probe on every GPU node of a Kubernetes cluster: one Job per node (pinned by nodeName,
 * all of its GPUs requested so the device plugin gives the container the node's driver and every
 * GPU), the result read from each pod's log in the same frames Slurm uses. Nodes are chosen from their
 * labels, GPU Feature Discovery's nvidia.com/gpu.* among them, which the report keeps.
 */
import { stringify as toYaml } from "yaml";
import { UserError } from "../errors.js";
import type { FleetTransport, NodeRun } from "./fleet-types.js";
import {
  apiUserError,
  kubeApi,
  kubeconfigPath,
  readKubeconfig,
  type KubeApi,
  type KubeCredentials,
} from "./kube-api.js";
import { frameRunResult, newNonce, nodeWrapperArgv, parseFrames, pythonBootstrap } from "./node-frame.js";

export interface KubeSelection {
  image: string;
  namespace: string;
  /** Label selector; default: GPU nodes (capacity nvidia.com/gpu or GFD labels). */
  selector?: string;
  kubeconfig?: string;
  context?: string;
  /** The non-root user the probe runs as (a restricted namespace refuses root); default 1000. */
  runAsUser?: number;
}

/** The probe's user by default: any non-root UID works, the probe reads and never writes the image. */
const DEFAULT_RUN_AS_USER = 1000;

/** Jobs created at once; the API server's 429 answers are waited out (kube-api.ts). */
const CREATE_CONCURRENCY = 8;

interface KubeNode {
  name: string;
  labels: Record<string, string>;
  gpuCapacity: number;
  ready: boolean;
  unschedulable: boolean;
}

interface ApiNode {
  metadata: { name: string; labels?: Record<string, string> };
  spec?: { unschedulable?: boolean };
  status?: {
    capacity?: Record<string, string>;
    conditions?: Array<{ type: string; status: string; reason?: string }>;
  };
}

function toKubeNode(node: ApiNode): KubeNode {
  const ready = node.status?.conditions?.find((c) => c.type === "Ready");
  return {
    name: node.metadata.name,
    labels: node.metadata.labels ?? {},
    gpuCapacity: Number(node.status?.capacity?.["nvidia.com/gpu"] ?? 0) || 0,
    ready: ready?.status === "True",
    unschedulable: node.spec?.unschedulable === true,
  };
}

/** GPU nodes: the device plugin advertises nvidia.com/gpu, or GFD / the operator labelled them. */
function isGpuNode(node: KubeNode): boolean {
  return (
    node.gpuCapacity > 0 ||
    node.labels["nvidia.com/gpu.present"] === "true" ||
    Object.keys(node.labels).some((l) => l.startsWith("nvidia.com/gpu."))
  );
}

const RUN_LABEL = "gpuprep.dev/fleet-run";

/** A DNS-1123 name for the node's Job: gpuprep-fleet-<run>-<index>. */
function jobName(nonce: string, index: number): string {
  return `gpuprep-fleet-${nonce.slice(0, 8)}-${index}`;
}

/**
 * The probe's Job on one node, fit for a namespace enforcing the Pod Security "restricted" profile
 * (https://kubernetes.io/docs/concepts/security/pod-security-standards/): non-root, no privilege
 * escalation, every capability dropped, seccomp RuntimeDefault, a read-only root filesystem with an
 * emptyDir at /tmp for the wrapper's and the bootstrap's temporary files. It asks for all of the
 * node's GPUs (`gpus`, its nvidia.com/gpu capacity), so the probe sees every one of them.
 */
export function jobManifest(
  selection: KubeSelection,
  node: string,
  index: number,
  nonce: string,
  limitSeconds: number,
  command: string[],
  gpus = 1,
): Record<string, unknown> {
  const labels = { "app.kubernetes.io/name": "gpuprep-fleet", [RUN_LABEL]: nonce.slice(0, 8) };
  const user = selection.runAsUser ?? DEFAULT_RUN_AS_USER;
  return {
    apiVersion: "batch/v1",
    kind: "Job",
    metadata: { name: jobName(nonce, index), namespace: selection.namespace, labels },
    spec: {
      backoffLimit: 0,
      // The wrapper kills the probe at the limit; this is the backstop for a pod stuck after it.
      activeDeadlineSeconds: limitSeconds + 120,
      ttlSecondsAfterFinished: 3600,
      template: {
        metadata: { labels },
        spec: {
          restartPolicy: "Never",
          nodeName: node,
          tolerations: [{ operator: "Exists" }],
          automountServiceAccountToken: false,
          securityContext: {
            runAsNonRoot: true,
            runAsUser: user,
            runAsGroup: user,
            seccompProfile: { type: "RuntimeDefault" },
          },
          volumes: [{ name: "tmp", emptyDir: {} }],
          containers: [
            {
              name: "probe",
              image: selection.image,
              command,
              env: [
                { name: "GPUPREP_NODE", valueFrom: { fieldRef: { fieldPath: "spec.nodeName" } } },
                // The root filesystem is read-only: temporary files and HOME go to the emptyDir.
                { name: "TMPDIR", value: "/tmp" },
                { name: "HOME", value: "/tmp" },
              ],
              securityContext: {
                allowPrivilegeEscalation: false,
                readOnlyRootFilesystem: true,
                runAsNonRoot: true,
                capabilities: { drop: ["ALL"] },
                seccompProfile: { type: "RuntimeDefault" },
              },
              volumeMounts: [{ name: "tmp", mountPath: "/tmp" }],
              ...(gpus > 0 ? { resources: { limits: { "nvidia.com/gpu": String(gpus) } } } : {}),
            },
          ],
        },
      },
    },
  };
}

/** All of a node's GPUs: its advertised nvidia.com/gpu capacity (none where GFD labels it without one). */
function gpusFor(node: KubeNode): number {
  return node.gpuCapacity;
}

interface KubeTransportOptions {
  selection: KubeSelection;
  python: string;
  /** Tests: an API client for a given server. */
  api?: KubeApi;
  credentials?: KubeCredentials;
  pollMs?: number;
}

function connect(options: KubeTransportOptions): { api: KubeApi; creds: KubeCredentials } {
  const creds =
    options.credentials ??
    readKubeconfig(kubeconfigPath(options.selection.kubeconfig), options.selection.context);
  return { api: options.api ?? kubeApi(creds), creds };
}

/**
 * One Job per node, CREATE_CONCURRENCY at a time, each POST retried while the API server answers
 * 429 (kube-api.ts waits its Retry-After). A node whose Job cannot be created is unreachable with
 * the API's reason; when the very first one fails and nothing else was created, the whole run
 * stops with that reason (credentials, RBAC, admission).
 */
async function createJobs(
  api: KubeApi,
  creds: KubeCredentials,
  selection: KubeSelection,
  asked: KubeNode[],
  nonce: string,
  limit: number,
  command: string[],
  runs: Map<string, NodeRun>,
): Promise<Map<string, { node: KubeNode; name: string }>> {
  const jobs = new Map<string, { node: KubeNode; name: string }>();
  const failures: Array<{ index: number; node: KubeNode; error: unknown }> = [];
  let next = 0;
  const worker = async () => {
    while (next < asked.length) {
      const index = next++;
      const node = asked[index] as KubeNode;
      const manifest = jobManifest(selection, node.name, index, nonce, limit, command, gpusFor(node));
      try {
        await api.post(`/apis/batch/v1/namespaces/${selection.namespace}/jobs`, manifest);
        jobs.set(jobName(nonce, index), { node, name: jobName(nonce, index) });
      } catch (error) {
        failures.push({ index, node, error });
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(CREATE_CONCURRENCY, asked.length) }, worker));
  if (jobs.size === 0 && failures.length > 0 && runs.size === 0) {
    const first = failures.sort((a, b) => a.index - b.index)[0];
    throw apiUserError(creds, first?.error);
  }
  for (const { node, error } of failures) {
    runs.set(node.name, {
      node: node.name,
      state: "unreachable",
      reason: `Job not created: ${(error as Error).message}`,
      result: null,
      durationMs: null,
      labels: node.labels,
    });
  }
  return jobs;
}

async function listGpuNodes(api: KubeApi, selection: KubeSelection): Promise<KubeNode[]> {
  const query = selection.selector ? `?labelSelector=${encodeURIComponent(selection.selector)}` : "";
  const list = await api.get<{ items?: ApiNode[] }>(`/api/v1/nodes${query}`);
  const nodes = (list.items ?? []).map(toKubeNode);
  return selection.selector ? nodes : nodes.filter(isGpuNode);
}

interface ApiPod {
  metadata: { name: string; labels?: Record<string, string> };
  spec?: { nodeName?: string };
  status?: {
    phase?: string;
    reason?: string;
    message?: string;
    containerStatuses?: Array<{ state?: { waiting?: { reason?: string; message?: string } } }>;
  };
}

function pendingReason(pod: ApiPod): string {
  const waiting = pod.status?.containerStatuses?.[0]?.state?.waiting;
  return (
    [pod.status?.reason, waiting?.reason, waiting?.message ?? pod.status?.message]
      .filter(Boolean)
      .join(": ") || "pod never started"
  );
}

export function kubeTransport(options: KubeTransportOptions): FleetTransport {
  const { selection, python } = options;
  let described = `Kubernetes namespace ${selection.namespace}`;
  return {
    kind: "kube",
    python,
    describe: () => described,
    async runPythonOnNodes(script, args, nodeTimeoutMs) {
      const { api, creds } = connect(options);
      described = `Kubernetes ${creds.context} namespace ${selection.namespace} (image ${selection.image})`;
      let nodes: KubeNode[];
      try {
        nodes = await listGpuNodes(api, selection);
      } catch (error) {
        throw apiUserError(creds, error);
      }
      if (nodes.length === 0) {
        throw new UserError(
          `no GPU nodes in context ${creds.context}${selection.selector ? ` match ${selection.selector}` : ""}`,
          "pass --selector with the label your GPU nodes carry",
        );
      }
      const runs = new Map<string, NodeRun>();
      const asked: KubeNode[] = [];
      for (const node of nodes) {
        if (!node.ready || node.unschedulable) {
          runs.set(node.name, {
            node: node.name,
            state: "down",
            reason: node.ready ? "cordoned (unschedulable); not asked" : "NotReady; not asked",
            result: null,
            durationMs: null,
            labels: node.labels,
          });
        } else asked.push(node);
      }
      const nonce = newNonce();
      const limit = Math.ceil(nodeTimeoutMs / 1000);
      const command = nodeWrapperArgv(nonce, limit, [python, "-c", pythonBootstrap(script), ...args]);
      const jobs = await createJobs(api, creds, selection, asked, nonce, limit, command, runs);
      try {
        await collectPods(api, selection.namespace, nonce, jobs, runs, limit, options.pollMs ?? 2000);
      } finally {
        for (const job of jobs.values()) {
          await api
            .delete(
              `/apis/batch/v1/namespaces/${selection.namespace}/jobs/${job.name}?propagationPolicy=Background`,
            )
            .catch(() => {});
        }
      }
      return [...runs.values()];
    },
  };
}

async function collectPods(
  api: KubeApi,
  namespace: string,
  nonce: string,
  jobs: Map<string, { node: KubeNode; name: string }>,
  runs: Map<string, NodeRun>,
  limitSeconds: number,
  pollMs: number,
): Promise<void> {
  // Pod start (image pull) gets as long again as the limit, at most 2 minutes more.
  const deadline = Date.now() + (limitSeconds + Math.min(120, limitSeconds)) * 1000;
  const started = Date.now();
  const pending = new Set(jobs.keys());
  let lastPods: ApiPod[] = [];
  while (pending.size > 0 && Date.now() < deadline) {
    const list = await api.get<{ items?: ApiPod[] }>(
      `/api/v1/namespaces/${namespace}/pods?labelSelector=${encodeURIComponent(`${RUN_LABEL}=${nonce.slice(0, 8)}`)}`,
    );
    lastPods = list.items ?? [];
    for (const pod of lastPods) {
      const job = pod.metadata.labels?.["job-name"];
      if (!job || !pending.has(job) || !podEnded(pod)) continue;
      pending.delete(job);
      const entry = jobs.get(job);
      if (!entry) continue;
      const durationMs = Date.now() - started;
      runs.set(
        entry.node.name,
        await finishedRun(api, namespace, entry.node, pod, nonce, limitSeconds, durationMs),
      );
    }
    if (pending.size > 0) await new Promise((r) => setTimeout(r, pollMs));
  }
  for (const job of pending) {
    const entry = jobs.get(job);
    if (!entry) continue;
    const pod = lastPods.find((p) => p.metadata.labels?.["job-name"] === job);
    runs.set(entry.node.name, unfinishedRun(entry.node, pod, limitSeconds));
  }
}

function podEnded(pod: ApiPod): boolean {
  return pod.status?.phase === "Succeeded" || pod.status?.phase === "Failed";
}

/** A pod that ended: its log's result, or unreachable when the log cannot be read. */
async function finishedRun(
  api: KubeApi,
  namespace: string,
  node: KubeNode,
  pod: ApiPod,
  nonce: string,
  limitSeconds: number,
  durationMs: number,
): Promise<NodeRun> {
  let log: string;
  try {
    log = await api.text(`/api/v1/namespaces/${namespace}/pods/${pod.metadata.name}/log?container=probe`);
  } catch (error) {
    return {
      node: node.name,
      state: "unreachable",
      reason: `pod log unreadable: ${(error as Error).message}`,
      result: null,
      durationMs,
      labels: node.labels,
    };
  }
  return runFromLog(node, log, nonce, limitSeconds, pod);
}

/** A job whose pod did not end in time: hung where it runs, else why it never started. */
function unfinishedRun(node: KubeNode, pod: ApiPod | undefined, limitSeconds: number): NodeRun {
  const running = pod?.status?.phase === "Running";
  return {
    node: node.name,
    state: running ? "hung" : "unreachable",
    reason: running
      ? `still running after the ${limitSeconds}s per-node limit`
      : `no result: ${pod ? pendingReason(pod) : "no pod was created"}`,
    result: null,
    durationMs: null,
    labels: node.labels,
  };
}

function runFromLog(node: KubeNode, log: string, nonce: string, limitSeconds: number, pod: ApiPod): NodeRun {
  const frame = parseFrames(log, nonce, false).frames.get("0");
  const base = { node: node.name, labels: node.labels };
  if (!frame || !frame.complete || frame.exitCode === null) {
    return {
      ...base,
      state: frame ? "hung" : "unreachable",
      reason: frame
        ? "its output was cut off before the end"
        : `the pod printed no gpuprep frame (${pod.status?.phase ?? "?"}: ${pendingReason(pod)})`,
      result: null,
      durationMs: frame?.durationMs ?? null,
    };
  }
  const result = frameRunResult(frame, limitSeconds);
  return {
    ...base,
    state: result.timedOut ? "hung" : "ran",
    reason: result.timedOut ? `killed at the ${limitSeconds}s per-node limit` : frame.decodeError,
    result,
    durationMs: frame.durationMs,
  };
}

/** --dry-run: the Job of every selected node, as YAML documents, nothing created. */
export async function printKubeManifests(
  selection: KubeSelection,
  python: string,
  script: string,
  args: string[],
  nodeTimeoutMs: number,
  options: Omit<KubeTransportOptions, "selection" | "python"> = {},
): Promise<string> {
  const nonce = newNonce();
  const limit = Math.ceil(nodeTimeoutMs / 1000);
  const command = nodeWrapperArgv(nonce, limit, [python, "-c", pythonBootstrap(script), ...args]);
  let nodes: KubeNode[];
  try {
    const { api, creds } = connect({ selection, python, ...options });
    nodes = await listGpuNodes(api, selection).catch((error: unknown) => {
      throw apiUserError(creds, error);
    });
  } catch (error) {
    // No cluster reachable (no kubeconfig at all, too): still show the manifest, for a placeholder
    // node with one GPU, and say so.
    if (!(error instanceof UserError)) throw error;
    process.stderr.write(
      `gpuprep: note: ${error.message}; showing the manifest for a placeholder node NODE\n`,
    );
    nodes = [{ name: "NODE", labels: {}, gpuCapacity: 1, ready: true, unschedulable: false }];
  }
  return nodes
    .map((node, i) =>
      toYaml(jobManifest(selection, node.name, i, nonce, limit, command, gpusFor(node)), { lineWidth: 0 }),
    )
    .join("---\n");
}
