/**
 * A local stand-in for the part of the Kubernetes API that `gpuprep fleet --kube` uses, for tests
 * on a machine where no real API server can run (Debian 12 packages only kubectl; npm has no
 * kube-apiserver). It speaks the same paths, JSON shapes and Status errors as the real API:
 *   GET    /api/v1/nodes[?labelSelector=]                 NodeList
 *   POST   /apis/batch/v1/namespaces/NS/jobs              Job (validated against the Kubernetes
 *                                                         OpenAPI schema, 422 Status when invalid)
 *   DELETE /apis/batch/v1/namespaces/NS/jobs/NAME         Status
 *   GET    /api/v1/namespaces/NS/pods?labelSelector=k=v   PodList
 *   GET    /api/v1/namespaces/NS/pods/NAME/log            text
 * and, like a kubelet, it runs each Job's container command for real on this machine, with the
 * node's environment (PATH, CUDA_VISIBLE_DEVICES) and the downward-API env resolved, so the pod
 * log is the real probe's framed output. Bearer-token auth: 401 Status without the token.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { randomBytes } from "node:crypto";
import { Job } from "kubernetes-models/batch/v1";
import { restrictedViolations } from "./pod-security.js";

export interface StandinNode {
  name: string;
  labels: Record<string, string>;
  gpus: number;
  ready?: boolean;
  /** Environment the "container" gets on this node. */
  env?: Record<string, string>;
  /** The pod never starts here (e.g. "ImagePullBackOff"). */
  pendingReason?: string;
}

interface Pod {
  metadata: {
    name: string;
    namespace: string;
    uid: string;
    labels: Record<string, string>;
    creationTimestamp: string;
  };
  spec: Record<string, unknown> & { nodeName?: string };
  status: Record<string, unknown> & { phase: string };
  log: string;
  child?: ChildProcess;
}

function status(code: number, reason: string, message: string) {
  return { kind: "Status", apiVersion: "v1", metadata: {}, status: "Failure", message, reason, code };
}

/** Equality-based label selectors ("a=b,c=d", "a", "!a"), as the API server understands them. */
function matches(selector: string | null, labels: Record<string, string>): boolean {
  if (!selector) return true;
  return selector.split(",").every((term) => {
    const [key, value] = term.split("=") as [string, string | undefined];
    if (key.startsWith("!")) return !(key.slice(1) in labels);
    return value === undefined ? key in labels : labels[key] === value;
  });
}

export interface StandinOptions {
  /**
   * Namespaces labelled pod-security.kubernetes.io/enforce=restricted: the Job is accepted (Jobs
   * are only warned about), but the Job controller's pod is refused when its spec breaks the
   * profile (pod-security.ts), as the real admission refuses it; the Job's status says why.
   */
  restrictedNamespaces?: string[];
  /** Answer this many Job creations with 429 Too Many Requests (Retry-After: 1) first. */
  throttleJobCreates?: number;
}

export class KubeStandin {
  readonly jobs = new Map<string, Record<string, unknown>>();
  /** nvidia.com/gpu each created pod asked for, by node. */
  readonly gpusAsked = new Map<string, string>();
  /** Why a Job's pod was refused, by Job name. */
  readonly refused = new Map<string, string>();
  private throttleLeft = 0;
  private restricted = new Set<string>();
  readonly pods = new Map<string, Pod>();
  /** Every request, "METHOD path", for assertions. */
  readonly requests: string[] = [];
  private constructor(
    private readonly server: Server,
    readonly url: string,
    readonly token: string,
    private readonly nodes: StandinNode[],
  ) {}

  static async start(nodes: StandinNode[], options: StandinOptions = {}): Promise<KubeStandin> {
    const token = randomBytes(16).toString("hex");
    let standin: KubeStandin | null = null;
    const server = createServer((req, res) => {
      standin
        ?.handle(req, res)
        .catch((error: unknown) => send(res, 500, status(500, "InternalError", String(error))));
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const address = server.address();
    const port = typeof address === "object" && address ? address.port : 0;
    standin = new KubeStandin(server, `http://127.0.0.1:${port}`, token, nodes);
    standin.throttleLeft = options.throttleJobCreates ?? 0;
    standin.restricted = new Set(options.restrictedNamespaces ?? []);
    return standin;
  }

  kubeconfig(token = this.token): string {
    return [
      "apiVersion: v1",
      "kind: Config",
      "current-context: standin",
      "clusters:",
      "- name: standin",
      "  cluster:",
      `    server: ${this.url}`,
      "contexts:",
      "- name: standin",
      "  context:",
      "    cluster: standin",
      "    user: tester",
      "users:",
      "- name: tester",
      "  user:",
      `    token: ${token}`,
      "",
    ].join("\n");
  }

  async stop(): Promise<void> {
    for (const pod of this.pods.values()) pod.child?.kill("SIGKILL");
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? "/", this.url);
    this.requests.push(`${req.method ?? "?"} ${url.pathname}`);
    if (req.headers.authorization !== `Bearer ${this.token}`) {
      return send(res, 401, status(401, "Unauthorized", "Unauthorized"));
    }
    const selector = url.searchParams.get("labelSelector");
    let m: RegExpExecArray | null;
    if (req.method === "GET" && url.pathname === "/api/v1/nodes") {
      const items = this.nodes.filter((n) => matches(selector, n.labels)).map(nodeObject);
      return send(res, 200, {
        kind: "NodeList",
        apiVersion: "v1",
        metadata: { resourceVersion: "1" },
        items,
      });
    }
    if (req.method === "POST" && (m = /^\/apis\/batch\/v1\/namespaces\/([^/]+)\/jobs$/.exec(url.pathname))) {
      const body = JSON.parse(await readBody(req)) as Record<string, unknown>;
      try {
        new Job(body).validate();
      } catch (error) {
        return send(res, 422, status(422, "Invalid", `Job is invalid: ${(error as Error).message}`));
      }
      if (this.throttleLeft > 0) {
        this.throttleLeft--;
        res.setHeader("retry-after", "1");
        return send(res, 429, status(429, "TooManyRequests", "too many requests, please try again later"));
      }
      const name = (body["metadata"] as { name: string }).name;
      if (this.jobs.has(name))
        return send(res, 409, status(409, "AlreadyExists", `jobs.batch "${name}" already exists`));
      this.jobs.set(name, body);
      this.startPod(m[1] as string, name, body);
      return send(res, 201, { ...body, status: {} });
    }
    if (
      req.method === "DELETE" &&
      (m = /^\/apis\/batch\/v1\/namespaces\/([^/]+)\/jobs\/([^/]+)$/.exec(url.pathname))
    ) {
      const name = m[2] as string;
      if (!this.jobs.delete(name))
        return send(res, 404, status(404, "NotFound", `jobs.batch "${name}" not found`));
      for (const [podName, pod] of this.pods) {
        if (pod.metadata.labels["job-name"] === name) {
          pod.child?.kill("SIGKILL");
          this.pods.delete(podName);
        }
      }
      return send(res, 200, {
        kind: "Status",
        apiVersion: "v1",
        metadata: {},
        status: "Success",
        details: { name, group: "batch", kind: "jobs" },
      });
    }
    if (req.method === "GET" && (m = /^\/api\/v1\/namespaces\/([^/]+)\/pods$/.exec(url.pathname))) {
      const items = [...this.pods.values()]
        .filter((p) => p.metadata.namespace === m?.[1] && matches(selector, p.metadata.labels))
        .map(({ log: _log, child: _child, ...pod }) => ({ apiVersion: "v1", kind: "Pod", ...pod }));
      return send(res, 200, { kind: "PodList", apiVersion: "v1", metadata: { resourceVersion: "1" }, items });
    }
    if (
      req.method === "GET" &&
      (m = /^\/api\/v1\/namespaces\/([^/]+)\/pods\/([^/]+)\/log$/.exec(url.pathname))
    ) {
      const pod = this.pods.get(m[2] as string);
      if (!pod) return send(res, 404, status(404, "NotFound", `pods "${m[2]}" not found`));
      res.writeHead(200, { "content-type": "text/plain" });
      return void res.end(pod.log);
    }
    return send(res, 404, status(404, "NotFound", "the server could not find the requested resource"));
  }

  /** The Job controller and the kubelet in one: a pod per Job, its container run here. */
  private startPod(namespace: string, job: string, body: Record<string, unknown>): void {
    const template = (
      body["spec"] as { template: { metadata?: { labels?: Record<string, string> }; spec: Pod["spec"] } }
    ).template;
    const violations = this.restricted.has(namespace) ? restrictedViolations(template.spec) : [];
    if (violations.length > 0) {
      // The Job controller's pod creation is refused by admission: no pod, a FailedCreate event.
      this.refused.set(
        job,
        `pods "${job}-x" is forbidden: violates PodSecurity "restricted:latest": ${violations.join(", ")}`,
      );
      return;
    }
    const name = `${job}-${randomBytes(3).toString("hex").slice(0, 5)}`;
    const pod: Pod = {
      metadata: {
        name,
        namespace,
        uid: randomBytes(8).toString("hex"),
        labels: {
          ...(template.metadata?.labels ?? {}),
          "job-name": job,
          "batch.kubernetes.io/job-name": job,
        },
        creationTimestamp: new Date().toISOString(),
      },
      spec: template.spec,
      status: { phase: "Pending" },
      log: "",
    };
    this.pods.set(name, pod);
    const node = this.nodes.find((n) => n.name === template.spec.nodeName);
    if (!node) {
      pod.status = {
        phase: "Failed",
        reason: "NodeAffinity",
        message: `node ${template.spec.nodeName ?? "?"} not found`,
      };
      return;
    }
    if (node.pendingReason) {
      pod.status = {
        phase: "Pending",
        containerStatuses: [
          {
            name: "probe",
            ready: false,
            restartCount: 0,
            state: { waiting: { reason: node.pendingReason, message: `Back-off pulling image` } },
          },
        ],
      };
      return;
    }
    const container = (
      template.spec["containers"] as Array<{
        command: string[];
        env?: Array<{ name: string; value?: string; valueFrom?: { fieldRef?: { fieldPath: string } } }>;
        resources?: { limits?: Record<string, string> };
      }>
    )[0];
    if (!container) return;
    this.gpusAsked.set(node.name, container.resources?.limits?.["nvidia.com/gpu"] ?? "0");
    const env: NodeJS.ProcessEnv = {
      PATH: process.env["PATH"],
      HOME: process.env["HOME"],
      ...(node.env ?? {}),
    };
    for (const e of container.env ?? []) {
      env[e.name] = e.valueFrom?.fieldRef?.fieldPath === "spec.nodeName" ? node.name : (e.value ?? "");
    }
    const [command, ...args] = container.command;
    const child = spawn(command as string, args, { env, stdio: ["ignore", "pipe", "pipe"] });
    pod.child = child;
    pod.status = { phase: "Running", startTime: new Date().toISOString() };
    child.stdout?.on("data", (c: Buffer) => (pod.log += c.toString()));
    child.stderr?.on("data", (c: Buffer) => (pod.log += c.toString()));
    child.on("close", (code) => {
      pod.status = { phase: code === 0 ? "Succeeded" : "Failed" };
    });
  }
}

function nodeObject(node: StandinNode) {
  const capacity: Record<string, string> = { cpu: "2", memory: "24Gi", pods: "110" };
  if (node.gpus > 0) capacity["nvidia.com/gpu"] = String(node.gpus);
  return {
    apiVersion: "v1",
    kind: "Node",
    metadata: {
      name: node.name,
      uid: `uid-${node.name}`,
      labels: { "kubernetes.io/hostname": node.name, ...node.labels },
      creationTimestamp: "2026-11-01T00:00:00Z",
    },
    spec: {},
    status: {
      capacity,
      allocatable: capacity,
      conditions: [
        {
          type: "Ready",
          status: node.ready === false ? "False" : "True",
          reason: node.ready === false ? "KubeletNotReady" : "KubeletReady",
        },
      ],
      nodeInfo: { architecture: "amd64", operatingSystem: "linux", kubeletVersion: "v1.30.0" },
    },
  };
}

function send(res: ServerResponse, code: number, body: unknown): void {
  res.writeHead(code, { "content-type": "application/json" });
  res.end(JSON.stringify(body));
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    req.on("error", reject);
  });
}
