/**
 * Issue 28 item 4 for the readers of issue 25: every network client with an overall deadline and
 * a byte cap. Loopback servers that trickle, flood, redirect in circles, to plain http, to another
 * scheme, or to another origin (where the token must not follow); https with a certificate the
 * client does not trust (refused) and with one NODE_EXTRA_CA_CERTS adds (read); and zips that lie
 * about their members' sizes (zip bombs).
 */
import { test, after } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { createServer as createHttpsServer } from "node:https";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { deflateRawSync } from "node:zlib";
import type { AddressInfo } from "node:net";
import type { IncomingMessage, ServerResponse } from "node:http";
import { DEFAULT_HTTP_LIMITS, HttpClient } from "../../src/remote/http.js";
import { readZipDirectory, memberBytes } from "../../src/remote/zip.js";
import { BufferSource } from "../../src/fatbin/file-reader.js";
import { startServer, type TestServer } from "../support/http-server.js";
import { requireBinary } from "../support/cli.js";
import { runCliAsync } from "./cli-async.js";
import { makeWheel, ARCH_PACKAGES } from "./wheels.js";

const servers: TestServer[] = [];
after(async () => {
  for (const server of servers) await server.close();
});

async function serve(routes: Record<string, (request: IncomingMessage, response: ServerResponse) => void>) {
  const server = await startServer(null, { ranges: false, routes });
  servers.push(server);
  return server;
}

const client = (limits: Partial<typeof DEFAULT_HTTP_LIMITS>) =>
  new HttpClient({ ...DEFAULT_HTTP_LIMITS, ...limits });

test("a server that trickles: cut at the idle limit, or at the overall deadline when it keeps sending", async () => {
  const server = await serve({
    "/slow": (_request, response) => {
      response.writeHead(200, { "content-length": 1000 });
      const timer = setInterval(() => response.write("x"), 150);
      response.on("close", () => clearInterval(timer));
    },
    "/silent": () => {},
  });
  const started = Date.now();
  await assert.rejects(
    client({ idleMs: 100 }).fetchBytes(`${server.url}/slow`, { maxBytes: 10_000 }),
    /sent nothing for 0\.1 s/,
  );
  await assert.rejects(
    client({ idleMs: 300 }).fetchBytes(`${server.url}/silent`, { maxBytes: 10_000 }),
    /sent nothing for 0\.3 s/,
  );
  await assert.rejects(
    client({ idleMs: 1000, deadlineMs: 800 }).fetchBytes(`${server.url}/slow`, { maxBytes: 10_000 }),
    /overall time limit of 1 s ran out/,
  );
  assert.ok(Date.now() - started < 5000, `took ${Date.now() - started} ms`);
});

test("a server that floods: refused at the response's cap and at the client's total", async () => {
  const flood = (_request: IncomingMessage, response: ServerResponse) => {
    response.writeHead(200);
    const chunk = Buffer.alloc(64 * 1024, 1);
    const pump = () => {
      while (response.write(chunk));
    };
    response.on("drain", pump);
    pump();
  };
  const server = await serve({ "/flood": flood });
  await assert.rejects(
    client({}).fetchBytes(`${server.url}/flood`, { maxBytes: 100_000 }),
    /more than 100000 bytes/,
  );
  const total = client({ maxBytes: 300_000 });
  await assert.rejects(
    total.fetchBytes(`${server.url}/flood`, { maxBytes: 10_000_000 }),
    /more than 300000 bytes/,
  );
  assert.ok(total.bytesReceived < 300_000 + 256 * 1024, `received ${total.bytesReceived}`);
});

test("redirects: at most 5, only to http(s), never from https down to http, and the token stays with its origin", async () => {
  const seen: (string | undefined)[] = [];
  const other = await serve({
    "/target": (request, response) => {
      seen.push(request.headers.authorization);
      response.end("ok");
    },
  });
  const server = await serve({
    "/loop": (_request, response) => void response.writeHead(302, { location: "/loop" }).end(),
    "/ftp": (_request, response) => void response.writeHead(301, { location: "ftp://127.0.0.1/x" }).end(),
    "/away": (_request, response) => void response.writeHead(307, { location: `${other.url}/target` }).end(),
  });
  await assert.rejects(
    client({}).fetchBytes(`${server.url}/loop`, { maxBytes: 1000 }),
    /more than 5 redirects/,
  );
  await assert.rejects(
    client({}).fetchBytes(`${server.url}/ftp`, { maxBytes: 1000 }),
    /only http and https are fetched/,
  );
  const away = await client({}).fetchBytes(`${server.url}/away`, {
    maxBytes: 1000,
    headers: { authorization: "Bearer secret" },
  });
  assert.equal(away.body.toString(), "ok");
  assert.deepEqual(
    seen,
    [undefined],
    "the Authorization header did not follow the redirect to another origin",
  );
});

test("https: a certificate the client does not trust is refused with a hint; NODE_EXTRA_CA_CERTS makes it trusted; no redirect down to http", async () => {
  requireBinary("openssl", "openssl");
  const dir = mkdtempSync(join(tmpdir(), "gpuprep-tls-"));
  execFileSync(
    "openssl",
    [
      "req",
      "-x509",
      "-newkey",
      "rsa:2048",
      "-nodes",
      "-days",
      "1",
      "-subj",
      "/CN=127.0.0.1",
      "-addext",
      "subjectAltName=IP:127.0.0.1",
      "-keyout",
      join(dir, "key.pem"),
      "-out",
      join(dir, "cert.pem"),
    ],
    { stdio: "ignore" },
  );
  const wheel = makeWheel(dir, ARCH_PACKAGES[0]!);
  const plain = await serve({});
  const server = createHttpsServer(
    { key: readFileSync(join(dir, "key.pem")), cert: readFileSync(join(dir, "cert.pem")) },
    (request, response) => {
      if (request.url === "/down")
        return void response.writeHead(302, { location: `${plain.url}/x.whl` }).end();
      response.writeHead(200, { "content-length": readFileSync(wheel).length });
      response.end(readFileSync(wheel));
    },
  );
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const url = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
  try {
    const untrusted = await runCliAsync(["scan", `${url}/${basename(wheel)}`, "--gpu", "sm_90"]);
    assert.equal(untrusted.code, 2);
    assert.match(untrusted.stderr, /self-signed certificate|certificate/);
    assert.match(
      untrusted.stderr,
      /hint: the server's certificate is not trusted here \(NODE_EXTRA_CA_CERTS=FILE adds a CA\)/,
    );
    const trusted = await runCliAsync(["scan", `${url}/${basename(wheel)}`, "--gpu", "sm_90", "--json"], {
      NODE_EXTRA_CA_CERTS: join(dir, "cert.pem"),
    });
    assert.equal(trusted.code, 0, trusted.stderr);
    assert.equal(JSON.parse(trusted.stdout).libraries[0].verdict.how, "sass");
    const down = await runCliAsync(["scan", `${url}/down`, "--gpu", "sm_90"], {
      NODE_EXTRA_CA_CERTS: join(dir, "cert.pem"),
    });
    assert.equal(down.code, 2);
    assert.match(down.stderr, /redirects to plain http .*: refused/);
  } finally {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});

/** One member named lib.so, its central directory sizes as given (a stored zip's offsets, by hand). */
function zipWith(member: Buffer, declared: { size: number; compressed: number; crc: number }): Buffer {
  const name = Buffer.from("lib.so");
  const local = Buffer.alloc(30);
  local.writeUInt32LE(0x04034b50, 0);
  local.writeUInt16LE(20, 4);
  local.writeUInt16LE(8, 8);
  local.writeUInt32LE(declared.crc, 14);
  local.writeUInt32LE(declared.compressed, 18);
  local.writeUInt32LE(declared.size, 22);
  local.writeUInt16LE(name.length, 26);
  const central = Buffer.alloc(46);
  central.writeUInt32LE(0x02014b50, 0);
  central.writeUInt16LE(20, 6);
  central.writeUInt16LE(8, 10);
  central.writeUInt32LE(declared.crc, 16);
  central.writeUInt32LE(declared.compressed, 20);
  central.writeUInt32LE(declared.size, 24);
  central.writeUInt16LE(name.length, 28);
  const directoryAt = local.length + name.length + member.length;
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(1, 8);
  end.writeUInt16LE(1, 10);
  end.writeUInt32LE(central.length + name.length, 12);
  end.writeUInt32LE(directoryAt, 16);
  return Buffer.concat([local, name, member, central, name, end]);
}

test("zip bombs: a declared size past deflate's ratio is refused before any inflating; inflating past the declared size stops there", async () => {
  const zeros = deflateRawSync(Buffer.alloc(10 * 1024 * 1024));
  const claim = zipWith(zeros, { size: 0xfffffff0, compressed: zeros.length, crc: 0 });
  await assert.rejects(
    readZipDirectory(new BufferSource(claim)),
    /claims 4294967280 bytes from \d+ compressed \(a zip bomb\)/,
  );
  const lie = zipWith(zeros, { size: 1000, compressed: zeros.length, crc: 0 });
  const directory = await readZipDirectory(new BufferSource(lie));
  const member = directory.members[0]!;
  let inflated = 0;
  await assert.rejects(
    (async () => {
      for await (const chunk of memberBytes(
        member,
        (async function* () {
          yield zeros;
        })(),
      ))
        inflated += chunk.length;
    })(),
    /inflates past its declared 1000 bytes/,
  );
  assert.ok(inflated <= 1000, `handed out ${inflated} bytes`);
  const wrongCrc = zipWith(zeros, { size: 10 * 1024 * 1024, compressed: zeros.length, crc: 12345 });
  const [crcMember] = (await readZipDirectory(new BufferSource(wrongCrc))).members;
  await assert.rejects(
    (async () => {
      for await (const chunk of memberBytes(
        crcMember!,
        (async function* () {
          yield zeros;
        })(),
      ))
        void chunk;
    })(),
    /CRC-32 does not match/,
  );
  writeFileSync(join(tmpdir(), "gpuprep-zip-bomb-claim.whl"), claim);
  const cli = await runCliAsync(["scan", join(tmpdir(), "gpuprep-zip-bomb-claim.whl"), "--gpu", "sm_90"]);
  assert.equal(cli.code, 2);
  assert.match(cli.stderr, /not a readable wheel \(lib\.so: claims .* \(a zip bomb\)\)/);
});
