/**
 * Wheels scanned without installing them: a local file, and a URL on a loopback server with and
 * without Range requests. With ranges only the directory and the libraries are fetched (counted
 * by the server too); without, the whole body is read once and its SHA-256 comes with it.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { scanWheel } from "../../src/remote/wheel.js";
import { HttpClient } from "../../src/remote/http.js";
import { startServer } from "../support/http-server.js";
import { ARCH_PACKAGES, MIXED_PACKAGE, makeWheel } from "./wheels.js";

const dir = mkdtempSync(join(tmpdir(), "gpuprep-wheels-"));
const mixed = makeWheel(dir, MIXED_PACKAGE);
const singles = ARCH_PACKAGES.map((spec) => makeWheel(dir, spec));

const targets = (scan: Awaited<ReturnType<typeof scanWheel>>) =>
  Object.fromEntries(
    scan.libraries.map((l) => [basename(l.path), [...new Set(l.entries.map((e) => e.target))].join(" ")]),
  );

const EXPECTED = {
  "libsm90.so": "sm_90",
  "libptx80.so": "compute_80",
  "libsm100a.so": "sm_100a",
  "libsm120ptx.so": "sm_120 compute_120",
};

test("a local wheel: each library's targets, read from the zip without extracting it", async () => {
  const scan = await scanWheel(mixed, { hashLocal: true });
  assert.equal(scan.transfer, "file");
  assert.equal(scan.wheel?.distribution, "mixedcuda");
  assert.deepEqual(targets(scan), EXPECTED);
  assert.ok(scan.libraries.every((l) => l.error === null && l.passes === 1));
  assert.equal(scan.sha256, createHash("sha256").update(readFileSync(mixed)).digest("hex"));
  for (const [index, path] of singles.entries()) {
    const single = await scanWheel(path);
    assert.equal(single.libraries.length, 1, path);
    assert.equal(Object.values(targets(single))[0], Object.values(EXPECTED)[index]);
  }
});

test("a wheel URL with Range requests: the directory and the libraries only, far less than the file", async () => {
  const server = await startServer(dir, { ranges: true });
  try {
    const client = new HttpClient();
    const scan = await scanWheel(`${server.url}/${basename(mixed)}`, { client });
    assert.equal(scan.transfer, "ranges");
    assert.deepEqual(targets(scan), EXPECTED);
    const size = readFileSync(mixed).length;
    assert.equal(scan.sizeBytes, size);
    // The four libraries deflate to ~40 KB; the 2 MB of data is never fetched.
    assert.ok(scan.bytesFetched < size / 10, `fetched ${scan.bytesFetched} of ${size}`);
    assert.equal(scan.bytesFetched, server.bytesSent, "the client's count is the server's");
    assert.equal(client.bytesReceived, server.bytesSent);
    assert.ok(
      server.requests.every((r) => r.range !== null),
      "every request was a range request",
    );
  } finally {
    await server.close();
  }
});

test("a wheel URL without Range requests: read once front to back, the same answer and the file's SHA-256", async () => {
  const server = await startServer(dir, { ranges: false });
  try {
    const scan = await scanWheel(`${server.url}/${basename(mixed)}`);
    assert.equal(scan.transfer, "stream");
    assert.deepEqual(targets(scan), EXPECTED);
    const bytes = readFileSync(mixed);
    assert.equal(scan.bytesFetched, bytes.length);
    assert.equal(server.bytesSent, bytes.length);
    assert.equal(server.requests.length, 1);
    assert.equal(scan.sha256, createHash("sha256").update(bytes).digest("hex"));
  } finally {
    await server.close();
  }
});

test("a wheel URL that is not there, or not a zip: one line naming it", async () => {
  const server = await startServer(dir, { ranges: true });
  try {
    await assert.rejects(scanWheel(`${server.url}/nope-1.0-py3-none-any.whl`), /HTTP 404/);
    await assert.rejects(scanWheel(`${server.url}/../../etc/passwd`), /HTTP 404|not a readable wheel/);
  } finally {
    await server.close();
  }
  await assert.rejects(scanWheel(join(dir, "missing.whl")), /cannot read/);
});
