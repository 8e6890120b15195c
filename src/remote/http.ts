/**
 * The one HTTP client behind every remote read (wheels, index pages, registries): node:http and
 * node:https with certificate checks on (Node's defaults, NODE_EXTRA_CA_CERTS honoured), and
 * bounds that no server can stretch (issue 28 item 4):
 * - an overall deadline for everything one client fetches, and a limit on idle time (a server
 *   that trickles a byte every 20 s is cut at the idle limit, one that trickles every second at
 *   the deadline);
 * - a byte cap for everything one client fetches, and one per response where the caller knows
 *   what to expect (an index page, a manifest, a token);
 * - at most 5 redirects, to http: or https: only, never from https to http, and credentials are
 *   not sent on to another origin.
 * Every body byte received is counted: a scan reports what it fetched against the file's size.
 */
import { request as httpRequest, type IncomingHttpHeaders, type IncomingMessage } from "node:http";
import { request as httpsRequest } from "node:https";
import { UserError, errorMessage } from "../errors.js";
import { TOOL_VERSION } from "../version.js";
import { printablePrefix } from "../util/safe-read.js";

const GiB = 1024 ** 3;

export interface HttpLimits {
  /** Everything this client fetches must be done within this many ms. */
  deadlineMs: number;
  /** A response that sends nothing for this long is abandoned. */
  idleMs: number;
  /** Body bytes this client may receive in all. */
  maxBytes: number;
  maxRedirects: number;
}

export const DEFAULT_HTTP_LIMITS: HttpLimits = {
  deadlineMs: 30 * 60_000,
  idleMs: 60_000,
  maxBytes: 64 * GiB,
  maxRedirects: 5,
};

/** A fetch that failed: one line naming the URL, and a hint. */
export class FetchError extends UserError {
  constructor(
    message: string,
    hint: string | null,
    /** The HTTP status, when the server answered. */
    readonly status: number | null = null,
  ) {
    super(message, hint);
    this.name = "FetchError";
  }
}

export interface HttpResponse {
  /** The URL that answered, after redirects. */
  url: string;
  status: number;
  headers: IncomingHttpHeaders;
  /** The body, counted and bounded; iterate it once. */
  body: AsyncIterable<Buffer>;
  /** Abandon the body (the connection is closed). */
  close(): void;
}

export interface RequestOptions {
  method?: "GET" | "HEAD";
  headers?: Record<string, string>;
  /** The most body bytes this response may have. */
  maxBytes?: number;
}

/** A URL as it may be printed: no user:password, no control characters, not too long. */
export function showUrl(url: string): string {
  try {
    const parsed = new URL(url);
    parsed.username = "";
    parsed.password = "";
    return printablePrefix(parsed.toString(), 160);
  } catch {
    return printablePrefix(url, 160);
  }
}

export class HttpClient {
  /** Body bytes received, over every response. */
  bytesReceived = 0;
  requests = 0;
  private readonly deadline: number;

  constructor(readonly limits: HttpLimits = DEFAULT_HTTP_LIMITS) {
    this.deadline = Date.now() + limits.deadlineMs;
  }

  /** One request, redirects followed; the caller reads or closes the body. */
  async open(url: string, options: RequestOptions = {}): Promise<HttpResponse> {
    let current = parseHttpUrl(url);
    const firstOrigin = current.origin;
    let headers = { ...(options.headers ?? {}) };
    for (let redirects = 0; ; redirects++) {
      const response = await this.send(current, options.method ?? "GET", headers);
      const location = response.headers.location;
      if (
        response.statusCode !== undefined &&
        [301, 302, 303, 307, 308].includes(response.statusCode) &&
        location
      ) {
        response.resume(); // drain and drop the redirect's own body
        if (redirects >= this.limits.maxRedirects)
          throw new FetchError(`${showUrl(url)}: more than ${this.limits.maxRedirects} redirects`, null);
        const next = parseHttpUrl(new URL(location, current).toString(), showUrl(current.toString()));
        if (current.protocol === "https:" && next.protocol === "http:")
          throw new FetchError(
            `${showUrl(current.toString())} redirects to plain http (${showUrl(next.toString())}): refused`,
            "use an https URL that stays on https",
          );
        // Credentials (a registry token) go only to the origin they were given for.
        if (next.origin !== firstOrigin) headers = withoutAuthorization(headers);
        current = next;
        continue;
      }
      return this.wrap(current.toString(), response, options.maxBytes);
    }
  }

  /** A whole small body (an index page, a manifest, a token): refused past `maxBytes`. */
  async fetchBytes(
    url: string,
    options: RequestOptions & { maxBytes: number },
  ): Promise<{ url: string; status: number; headers: IncomingHttpHeaders; body: Buffer }> {
    const response = await this.open(url, options);
    const parts: Buffer[] = [];
    for await (const chunk of response.body) parts.push(chunk);
    return {
      url: response.url,
      status: response.status,
      headers: response.headers,
      body: Buffer.concat(parts),
    };
  }

  private remaining(): number {
    return this.deadline - Date.now();
  }

  private send(url: URL, method: string, headers: Record<string, string>): Promise<IncomingMessage> {
    if (this.remaining() <= 0) return Promise.reject(this.deadlineError(url.toString()));
    this.requests++;
    const requester = url.protocol === "https:" ? httpsRequest : httpRequest;
    return new Promise((resolve, reject) => {
      const request = requester(url, {
        method,
        headers: { "user-agent": `gpuprep/${TOOL_VERSION}`, ...headers },
        timeout: this.limits.idleMs,
      });
      const timer = setTimeout(() => request.destroy(this.deadlineError(url.toString())), this.remaining());
      request.on("timeout", () =>
        request.destroy(
          new FetchError(
            `${showUrl(url.toString())}: the server sent nothing for ${this.limits.idleMs / 1000} s`,
            null,
          ),
        ),
      );
      request.on("error", (error) => {
        clearTimeout(timer);
        reject(error instanceof FetchError ? error : connectionError(url.toString(), error));
      });
      request.on("response", (response) => {
        clearTimeout(timer);
        resolve(response);
      });
      request.end();
    });
  }

  private deadlineError(url: string): FetchError {
    return new FetchError(
      `${showUrl(url)}: the overall time limit of ${Math.round(this.limits.deadlineMs / 1000)} s ran out`,
      "the server is too slow, or the download too large for the limit",
    );
  }

  private wrap(url: string, response: IncomingMessage, maxBytes: number | undefined): HttpResponse {
    return {
      url,
      status: response.statusCode ?? 0,
      headers: response.headers,
      body: this.countedBody(url, response, Math.min(maxBytes ?? Infinity, this.limits.maxBytes)),
      close: () => response.destroy(),
    };
  }

  /** The body with every byte counted, the caps and the idle and overall limits enforced. */
  private async *countedBody(url: string, response: IncomingMessage, cap: number): AsyncGenerator<Buffer> {
    const idleSeconds = this.limits.idleMs / 1000;
    response.setTimeout(this.limits.idleMs, () =>
      response.destroy(new FetchError(`${showUrl(url)}: the server sent nothing for ${idleSeconds} s`, null)),
    );
    const timer = setTimeout(() => response.destroy(this.deadlineError(url)), Math.max(0, this.remaining()));
    let received = 0;
    try {
      for await (const chunk of response as AsyncIterable<Buffer>) {
        received += chunk.length;
        this.bytesReceived += chunk.length;
        if (received > cap || this.bytesReceived > this.limits.maxBytes)
          throw new FetchError(
            `${showUrl(url)}: more than ${received > cap ? cap : this.limits.maxBytes} bytes`,
            "the server sends more than this document can be",
          );
        yield chunk;
      }
    } catch (error) {
      throw error instanceof FetchError ? error : connectionError(url, error);
    } finally {
      clearTimeout(timer);
      response.destroy();
    }
  }
}

function withoutAuthorization(headers: Record<string, string>): Record<string, string> {
  return Object.fromEntries(
    Object.entries(headers).filter(([name]) => name.toLowerCase() !== "authorization"),
  );
}

function parseHttpUrl(text: string, from?: string): URL {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new FetchError(`"${printablePrefix(text, 80)}" is not a URL`, "give an http:// or https:// URL");
  }
  if (url.protocol !== "http:" && url.protocol !== "https:")
    throw new FetchError(
      `${from ? `${from} redirects to` : "the URL"} ${showUrl(text)}: only http and https are fetched`,
      "give an http:// or https:// URL",
    );
  return url;
}

function connectionError(url: string, error: unknown): FetchError {
  const code = (error as { code?: string } | null)?.code;
  const text = errorMessage(error).split("\n")[0] ?? "";
  const tls = code !== undefined && /CERT|SSL|TLS|SELF_SIGNED/.test(code);
  return new FetchError(
    `${showUrl(url)}: ${printablePrefix(text, 120)}`,
    tls
      ? "the server's certificate is not trusted here (NODE_EXTRA_CA_CERTS=FILE adds a CA)"
      : "check the URL and the network",
  );
}

/** A response status that is not the one expected, as one line. */
export function statusError(url: string, status: number, what: string): FetchError {
  const hint =
    status === 401 || status === 403
      ? "the server wants credentials; gpuprep reads public files only"
      : status === 404
        ? "check the URL"
        : null;
  return new FetchError(`${showUrl(url)}: HTTP ${status} for ${what}`, hint, status);
}
