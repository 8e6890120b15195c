/**
 * The Kubernetes API client ends every call by an overall deadline and a byte cap (issue 28
 * medium 8): a server that trickles a byte before the idle limit each time never looked idle and
 * held `fleet --kube` forever; one that streams without end grew memory. Loopback servers, the
 * real client.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { kubeApi } from "../../src/transports/kube-api.js";

async function serve(handler: Parameters<typeof createServer>[1]): Promise<{ server: Server; url: string }> {
  const server = createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

test(
  "a server that trickles a byte before each idle limit is cut at the overall deadline",
  { timeout: 20_000 },
  async () => {
    const timers: NodeJS.Timeout[] = [];
    const { server, url } = await serve((_req, res) => {
      res.writeHead(200, { "content-type": "application/json" });
      timers.push(setInterval(() => res.write(" "), 100));
    });
    try {
      const api = kubeApi({ server: url, context: "c", insecure: false }, 500, 1500);
      const started = Date.now();
      await assert.rejects(api.get("/api/v1/nodes"), /no complete answer within 1\.5s/);
      assert.ok(Date.now() - started < 5000, `took ${Date.now() - started} ms`);
    } finally {
      for (const timer of timers) clearInterval(timer);
      server.closeAllConnections();
      server.close();
    }
  },
);

test(
  "an answer that never ends is cut at the byte cap, not read into memory",
  { timeout: 20_000 },
  async () => {
    const chunk = Buffer.alloc(1024 * 1024, 0x20);
    const { server, url } = await serve((_req, res) => {
      res.writeHead(200);
      const pump = (): void => {
        while (!res.destroyed && res.write(chunk));
        if (!res.destroyed) res.once("drain", pump);
      };
      pump();
    });
    try {
      const api = kubeApi({ server: url, context: "c", insecure: false }, 5000, 60_000);
      await assert.rejects(api.text("/api/v1/namespaces/x/pods/y/log"), /larger than 64 MiB/);
    } finally {
      server.closeAllConnections();
      server.close();
    }
  },
);

test("a normal answer still arrives (silent case)", async () => {
  const { server, url } = await serve((_req, res) => {
    res.writeHead(200, { "content-type": "application/json" });
    res.end('{"items": []}');
  });
  try {
    const api = kubeApi({ server: url, context: "c", insecure: false }, 500, 1500);
    assert.deepEqual(await api.get("/api/v1/nodes"), { items: [] });
  } finally {
    server.close();
  }
});
