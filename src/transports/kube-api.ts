/**
 * The few Kubernetes API calls fleet needs, over HTTP(S) with the kubeconfig's own credentials
 * (bearer token or client certificate, the cluster's CA). No kubectl and no client library: the
 * calls are plain REST, and a machine with only Node and a kubeconfig can run them.
 */
import { request as httpRequest } from "node:http";
import { request as httpsRequest } from "node:https";
import { homedir } from "node:os";
import { join } from "node:path";
import { parse as parseYaml } from "yaml";
import { UserError, errorMessage } from "../errors.js";
import { READ_LIMITS, readRegularFile, readTextFile } from "../util/safe-read.js";

export interface KubeCredentials {
  server: string;
  context: string;
  ca?: Buffer;
  cert?: Buffer;
  key?: Buffer;
  token?: string;
  insecure: boolean;
}

interface Named<T> {
  name: string;
  [key: string]: unknown;
  cluster?: T;
  user?: T;
  context?: T;
}

function fileOrData(data: unknown, file: unknown, what: string): Buffer | undefined {
  if (typeof data === "string") return Buffer.from(data, "base64");
  if (typeof file === "string") {
    // util/safe-read: a FIFO or /dev/zero named as a token or certificate is one line.
    return readRegularFile(file, {
      maxBytes: READ_LIMITS.credential,
      hint: `check the kubeconfig's ${what} path`,
    });
  }
  return undefined;
}

export function kubeconfigPath(explicit: string | undefined, env: NodeJS.ProcessEnv = process.env): string {
  return explicit ?? env["KUBECONFIG"]?.split(":")[0] ?? join(homedir(), ".kube", "config");
}

/** The cluster and user of a context (default: current-context), as the API client needs them. */
export function readKubeconfig(path: string, contextName?: string): KubeCredentials {
  const hint = "pass --kubeconfig FILE or set KUBECONFIG";
  const text = readTextFile(path, { maxBytes: READ_LIMITS.kubeconfig, hint });
  let doc: Record<string, unknown>;
  try {
    doc = parseYaml(text) as Record<string, unknown>;
  } catch (error) {
    // yaml's messages quote the source line; only its code and position are said.
    const { code, linePos } = error as { code?: unknown; linePos?: { line: number; col: number }[] };
    const where = linePos?.[0] ? ` at line ${linePos[0].line}, column ${linePos[0].col}` : "";
    throw new UserError(
      `kubeconfig ${path} is not valid YAML (${typeof code === "string" ? code : "syntax error"}${where})`,
      hint,
    );
  }
  const list = <T>(key: string) => (Array.isArray(doc?.[key]) ? (doc[key] as Named<T>[]) : []);
  const name =
    contextName ?? (typeof doc?.["current-context"] === "string" ? doc["current-context"] : undefined);
  const context = list<{ cluster?: string; user?: string }>("contexts").find((c) => c.name === name)?.context;
  if (!name || !context?.cluster) {
    throw new UserError(
      `kubeconfig ${path} has no context ${name ?? "(no current-context)"}`,
      "pass --context NAME",
    );
  }
  const cluster = list<Record<string, unknown>>("clusters").find((c) => c.name === context.cluster)?.cluster;
  const user = list<Record<string, unknown>>("users").find((u) => u.name === context.user)?.user ?? {};
  if (!cluster || typeof cluster["server"] !== "string") {
    throw new UserError(
      `kubeconfig ${path}: cluster ${context.cluster} has no server`,
      "check the kubeconfig",
    );
  }
  if (user["exec"] || user["auth-provider"]) {
    throw new UserError(
      `kubeconfig context ${name} authenticates through an exec/auth-provider plugin, which gpuprep does not run`,
      "use a context with a token or client certificate (e.g. a service account token)",
    );
  }
  let token = typeof user["token"] === "string" ? user["token"] : undefined;
  if (!token && typeof user["tokenFile"] === "string")
    token = fileOrData(undefined, user["tokenFile"], "tokenFile")?.toString("utf8").trim();
  const creds: KubeCredentials = {
    server: cluster["server"].replace(/\/+$/, ""),
    context: name,
    insecure: cluster["insecure-skip-tls-verify"] === true,
  };
  const ca = fileOrData(
    cluster["certificate-authority-data"],
    cluster["certificate-authority"],
    "certificate-authority",
  );
  const cert = fileOrData(user["client-certificate-data"], user["client-certificate"], "client-certificate");
  const key = fileOrData(user["client-key-data"], user["client-key"], "client-key");
  if (ca) creds.ca = ca;
  if (cert) creds.cert = cert;
  if (key) creds.key = key;
  if (token) creds.token = token;
  return creds;
}

export class KubeApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    /** The server's Retry-After (seconds) on a 429 or 503, when it sent one. */
    readonly retryAfterSeconds: number | null = null,
  ) {
    super(message);
  }
}

/**
 * Waits out the API server's throttling: a 429 (Too Many Requests, API Priority and Fairness) or
 * a 503 with Retry-After is tried again after the time it asks for (else 1, 2, 4, 8, 16 s, with
 * jitter), up to `tries` times in all; any other answer is final.
 */
export async function withThrottleRetry<T>(
  attempt: () => Promise<T>,
  tries = 6,
  sleep: (ms: number) => Promise<void> = (ms) => new Promise((r) => setTimeout(r, ms)),
): Promise<T> {
  for (let i = 1; ; i++) {
    try {
      return await attempt();
    } catch (error) {
      const throttled =
        error instanceof KubeApiError &&
        (error.status === 429 || (error.status === 503 && error.retryAfterSeconds !== null));
      if (!throttled || i >= tries) throw error;
      const asked = error.retryAfterSeconds;
      const backoff = 2 ** (i - 1) * 1000;
      await sleep(Math.min(30_000, asked !== null ? asked * 1000 : backoff + Math.random() * 250));
    }
  }
}

export interface KubeApi {
  get<T>(path: string): Promise<T>;
  post<T>(path: string, body: unknown): Promise<T>;
  delete(path: string): Promise<void>;
  /** Raw text (pod logs). */
  text(path: string): Promise<string>;
}

/** Largest response read: a pod log of one probe is far below it. */
const MAX_RESPONSE = 64 * 1024 * 1024;

/** The request's method, headers and TLS: the bearer token, the cluster's CA, a client certificate. */
function requestOptions(
  creds: KubeCredentials,
  method: string,
  timeoutMs: number,
  payload: string | undefined,
) {
  const headers: Record<string, string> = { accept: "application/json" };
  if (creds.token) headers["authorization"] = `Bearer ${creds.token}`;
  if (payload) headers["content-type"] = "application/json";
  return {
    method,
    headers,
    timeout: timeoutMs,
    ...(creds.ca ? { ca: creds.ca } : {}),
    ...(creds.cert ? { cert: creds.cert } : {}),
    ...(creds.key ? { key: creds.key } : {}),
    rejectUnauthorized: !creds.insecure,
  };
}

/** A refusal as a KubeApiError: the Status object's message where the body is one, and Retry-After. */
function refusal(
  what: string,
  status: number,
  text: string,
  retryAfterHeader: string | undefined,
): KubeApiError {
  let message = text.slice(0, 300);
  try {
    message = (JSON.parse(text) as { message?: string }).message ?? message;
  } catch {
    // not a Status object
  }
  const retryAfter = Number(retryAfterHeader);
  return new KubeApiError(
    status,
    `${what}: ${status} ${message}`,
    Number.isFinite(retryAfter) && retryAfter >= 0 ? retryAfter : null,
  );
}

/**
 * One call, its answer's text. `timeoutMs` is the socket's idle limit; `deadlineMs` bounds the
 * whole call: a server that trickles a byte every 20 s never goes idle, and used to hold
 * `fleet --kube` forever (issue 28). An answer over MAX_RESPONSE ends the call.
 */
function kubeCall(
  creds: KubeCredentials,
  { timeoutMs, deadlineMs }: { timeoutMs: number; deadlineMs: number },
  method: string,
  path: string,
  body?: unknown,
): Promise<string> {
  return new Promise((resolve, reject) => {
    const url = new URL(creds.server + path);
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const send = url.protocol === "https:" ? httpsRequest : httpRequest;
    const req = send(url, requestOptions(creds, method, timeoutMs, payload), (res) => {
      const chunks: Buffer[] = [];
      let size = 0;
      res.on("data", (chunk: Buffer) => {
        size += chunk.length;
        if (size <= MAX_RESPONSE) chunks.push(chunk);
        else
          req.destroy(
            new Error(`${method} ${path}: the answer is larger than ${MAX_RESPONSE / 2 ** 20} MiB`),
          );
      });
      res.on("error", (error) => reject(error));
      res.on("end", () => {
        const text = Buffer.concat(chunks).toString("utf8");
        const status = res.statusCode ?? 0;
        if (status >= 200 && status < 300) resolve(text);
        else reject(refusal(`${method} ${path}`, status, text, res.headers["retry-after"]));
      });
    });
    req.on("timeout", () =>
      req.destroy(new Error(`${method} ${path}: no answer within ${timeoutMs / 1000}s`)),
    );
    const deadline = setTimeout(
      () => req.destroy(new Error(`${method} ${path}: no complete answer within ${deadlineMs / 1000}s`)),
      deadlineMs,
    );
    req.on("close", () => clearTimeout(deadline));
    req.on("error", (error) => reject(error));
    if (payload) req.write(payload);
    req.end();
  });
}

/** The API client: JSON calls and raw text, each retried while the server throttles (withThrottleRetry). */
export function kubeApi(creds: KubeCredentials, timeoutMs = 30_000, deadlineMs = 120_000): KubeApi {
  const retried = (method: string, path: string, body?: unknown) =>
    withThrottleRetry(() => kubeCall(creds, { timeoutMs, deadlineMs }, method, path, body));
  const json = async <T>(method: string, path: string, body?: unknown) =>
    JSON.parse(await retried(method, path, body)) as T;
  return {
    get: (path) => json("GET", path),
    post: (path, body) => json("POST", path, body),
    delete: async (path) => {
      await retried("DELETE", path);
    },
    text: (path) => retried("GET", path),
  };
}

/** A connection failure or a refusal from the API server as the one-line error the CLI prints. */
export function apiUserError(creds: KubeCredentials, error: unknown): UserError {
  if (error instanceof KubeApiError && (error.status === 401 || error.status === 403)) {
    return new UserError(
      `the Kubernetes API refused context ${creds.context}: ${error.message}`,
      "check the credentials / RBAC (nodes: list; jobs: create, delete; pods, pods/log: get, list)",
    );
  }
  return new UserError(
    `cannot talk to the Kubernetes API at ${creds.server}: ${errorMessage(error)}`,
    "check `kubectl cluster-info` with the same kubeconfig",
  );
}
