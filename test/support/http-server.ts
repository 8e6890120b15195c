/**
 * A loopback HTTP server for the remote readers' tests: files of a folder, with or without Range
 * requests (RFC 9110 single ranges, suffix ranges too), every body byte it sends counted, plus
 * routes of a test's own (index pages, redirects, a server that trickles).
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import { readFileSync, statSync } from "node:fs";
import { join, normalize } from "node:path";
import type { AddressInfo } from "node:net";

export type Route = (request: IncomingMessage, response: ServerResponse) => void;

export interface TestServer {
  url: string;
  /** Body bytes sent, over all responses. */
  bytesSent: number;
  requests: { method: string; path: string; range: string | null; status: number }[];
  close(): Promise<void>;
}

export interface ServerOptions {
  /** Serve Range requests (206); else every GET gets the whole file (200). */
  ranges: boolean;
  /** path (without the query) -> handler, tried before the files. */
  routes?: Record<string, Route>;
}

function parseRange(header: string, size: number): [number, number] | null {
  const match = /^bytes=(\d*)-(\d*)$/.exec(header.trim());
  if (!match || (match[1] === "" && match[2] === "")) return null;
  if (match[1] === "") {
    const suffix = Math.min(Number(match[2]), size);
    return [size - suffix, size - 1];
  }
  const start = Number(match[1]);
  const end = match[2] === "" ? size - 1 : Math.min(Number(match[2]), size - 1);
  return start <= end && start < size ? [start, end] : null;
}

export async function startServer(root: string | null, options: ServerOptions): Promise<TestServer> {
  const state: TestServer = { url: "", bytesSent: 0, requests: [], close: async () => {} };
  const server = createServer((request, response) => {
    const path = decodeURIComponent((request.url ?? "/").split("?")[0] as string);
    const entry = { method: request.method ?? "GET", path, range: request.headers.range ?? null, status: 0 };
    state.requests.push(entry);
    const write = response.write.bind(response);
    const end = response.end.bind(response);
    // Count what the body carries, whoever writes it.
    response.write = ((chunk: unknown, ...rest: unknown[]) => {
      if (chunk) state.bytesSent += Buffer.byteLength(chunk as Buffer);
      return (write as (...args: unknown[]) => boolean)(chunk, ...rest);
    }) as typeof response.write;
    response.end = ((chunk?: unknown, ...rest: unknown[]) => {
      if (chunk && typeof chunk !== "function") state.bytesSent += Buffer.byteLength(chunk as Buffer);
      entry.status = response.statusCode;
      return (end as (...args: unknown[]) => ServerResponse)(chunk, ...rest);
    }) as typeof response.end;
    const route = options.routes?.[path];
    if (route) return route(request, response);
    if (root === null) return void response.writeHead(404).end();
    const file = join(root, normalize(path).replace(/^(\.\.[/\\])+/, ""));
    let size: number;
    try {
      const info = statSync(file);
      if (!info.isFile()) throw new Error("not a file");
      size = info.size;
    } catch {
      return void response.writeHead(404).end("not found");
    }
    const bytes = readFileSync(file);
    const range = options.ranges && request.headers.range ? parseRange(request.headers.range, size) : null;
    if (options.ranges && request.headers.range && !range)
      return void response.writeHead(416, { "content-range": `bytes */${size}` }).end();
    if (range) {
      response.writeHead(206, {
        "content-range": `bytes ${range[0]}-${range[1]}/${size}`,
        "content-length": range[1] - range[0] + 1,
        "accept-ranges": "bytes",
      });
      return void response.end(
        request.method === "HEAD" ? undefined : bytes.subarray(range[0], range[1] + 1),
      );
    }
    response.writeHead(200, {
      "content-length": size,
      ...(options.ranges ? { "accept-ranges": "bytes" } : {}),
    });
    response.end(request.method === "HEAD" ? undefined : bytes);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  state.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  state.close = () =>
    new Promise((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return state;
}
