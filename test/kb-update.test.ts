import { test } from "node:test";
import { asDriver } from "./support/driver.js";
import assert from "node:assert/strict";
import { createServer, type Server } from "node:http";
import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, existsSync, writeFileSync, mkdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { KnowledgeBase } from "../src/kb/index.js";
import { loadPackagedData, mergeOverlay } from "../src/kb/load.js";
import { readOverlay } from "../src/kb/overlay.js";
import { filesFromIndexPage, parseWheelName } from "../src/kb/update.js";
import { schemaErrors } from "./support/json-schemas.js";
import { asCapability } from "./support/capability.js";

const run = promisify(execFile);
const repo = fileURLToPath(new URL("../..", import.meta.url));
const fixtures = join(repo, "test/fixtures/kb-index/whl/torch");
const cli = join(repo, "dist/src/cli/main.js");

/** Serves the recorded index pages: PEP 691 JSON when asked for it (unless htmlOnly), else PEP 503 HTML. */
async function serveIndex(htmlOnly: boolean): Promise<{ server: Server; base: string; requests: string[] }> {
  const requests: string[] = [];
  const server = createServer((request, response) => {
    requests.push(`${request.url} ${request.headers.accept ?? ""}`);
    if (request.url !== "/whl/torch/") {
      response.writeHead(404).end("not found");
      return;
    }
    const wantsJson =
      !htmlOnly && (request.headers.accept ?? "").includes("application/vnd.pypi.simple.v1+json");
    const file = wantsJson ? "index.json" : "index.html";
    response.writeHead(200, {
      "content-type": wantsJson ? "application/vnd.pypi.simple.v1+json" : "text/html",
    });
    response.end(readFileSync(join(fixtures, file)));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  assert.ok(address && typeof address === "object");
  return { server, base: `http://127.0.0.1:${address.port}/whl`, requests };
}

async function gpuprep(args: string[], cacheHome: string) {
  try {
    const { stdout, stderr } = await run(process.execPath, [cli, ...args], {
      env: { ...process.env, XDG_CACHE_HOME: cacheHome, NO_COLOR: "1" },
    });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code: number; stdout: string; stderr: string };
    return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr };
  }
}

test("wheel names: variant, Python (incl. free-threaded) and platform; others skipped", () => {
  assert.deepEqual(
    parseWheelName("/whl/cu130/torch-2.11.0%2Bcu130-cp314-cp314t-manylinux_2_28_aarch64.whl#sha256=ab"),
    {
      torch: "2.11",
      variant: "cu130",
      python: "3.14t",
      platform: "linux-aarch64",
    },
  );
  assert.equal(parseWheelName("torch-2.11.0+cu130-cp312-cp312-win_amd64.whl"), null);
  assert.equal(parseWheelName("torchvision-0.26.0+cu130-cp312-cp312-manylinux_2_28_x86_64.whl"), null);
});

for (const htmlOnly of [false, true]) {
  test(`kb update writes a user overlay from the ${htmlOnly ? "PEP 503 HTML" : "PEP 691 JSON"} index, merged at load`, async () => {
    const { server, base, requests } = await serveIndex(htmlOnly);
    const cacheHome = mkdtempSync(join(tmpdir(), "gpuprep-kb-"));
    const packaged = join(repo, "src/kb/data/torch-builds.json");
    const packagedBefore = readFileSync(packaged, "utf8");
    try {
      const result = await gpuprep(["kb", "update", "--index-url", base, "--json"], cacheHome);
      assert.equal(result.code, 0, result.stderr);
      assert.deepEqual(schemaErrors(JSON.parse(result.stdout)), [], "against schemas/gpuprep.kb.v2");
      const summary = JSON.parse(result.stdout).result;
      const overlayPath = join(cacheHome, "gpuprep", "kb-overlay.json");
      assert.equal(summary.overlay, overlayPath);
      assert.deepEqual(summary.releases.sort(), ["2.11", "2.14"]);
      assert.match(requests[0] ?? "", /^\/whl\/torch\/ application\/vnd\.pypi\.simple\.v1\+json/);

      const kb = new KnowledgeBase(mergeOverlay(loadPackagedData(), readOverlay(overlayPath)));
      // a known build keeps its sourced arch list and gains the free-threaded wheel
      const known = kb.torchBuild("2.11", "cu130", "linux-aarch64")!;
      assert.deepEqual(known.archList, ["sm_80", "sm_90", "sm_100", "sm_110", "sm_120"]);
      assert.ok(known.pythons.includes("3.14t"));
      assert.notEqual(known.confidence, "index");
      // a build the packaged data lacks arrives without an arch list, and is never recommended
      const unknown = kb.torchBuild("2.14.0", "cu129", "linux-x86_64")!;
      assert.equal(unknown.confidence, "index");
      assert.deepEqual(unknown.archList, []);
      assert.equal(unknown.sources[0]?.url, `${base}/torch/`);
      const evaluation = kb.evaluateTorchBuilds({
        computeCapability: asCapability("9.0"),
        driverVersion: asDriver("580.95.05"),
        cpuArch: "x86_64",
      });
      assert.ok(
        evaluation.rejected.some(
          (entry) => entry.build === unknown && /arch list unknown/.test(entry.reason),
        ),
      );
      // the packaged data itself is untouched, and knows no 2.14 cu129 build
      assert.equal(readFileSync(packaged, "utf8"), packagedBefore);
      assert.equal(new KnowledgeBase(loadPackagedData()).torchBuild("2.14.0", "cu129", "linux-x86_64"), null);
    } finally {
      server.close();
    }
  });
}

test("kb update: an unreachable index and an HTTP error are one-line errors", async () => {
  const cacheHome = mkdtempSync(join(tmpdir(), "gpuprep-kb-"));
  const { server, base } = await serveIndex(true);
  try {
    const missing = await gpuprep(["kb", "update", "--index-url", `${base}/nothing`], cacheHome);
    assert.equal(missing.code, 2);
    assert.match(missing.stderr, /gpuprep: error: .*HTTP 404/);
    assert.doesNotMatch(missing.stderr, /at .*\.js:\d+/);
    assert.equal(existsSync(join(cacheHome, "gpuprep", "kb-overlay.json")), false);
  } finally {
    server.close();
  }
  const refused = await gpuprep(["kb", "update", "--index-url", "http://127.0.0.1:9/whl"], cacheHome);
  assert.equal(refused.code, 2);
  assert.match(refused.stderr, /cannot reach http:\/\/127\.0\.0\.1:9\/whl\/torch\//);
});

test("a broken overlay is a clear error, not a crash", async () => {
  const cacheHome = mkdtempSync(join(tmpdir(), "gpuprep-kb-"));
  mkdirSync(join(cacheHome, "gpuprep"), { recursive: true });
  writeFileSync(join(cacheHome, "gpuprep", "kb-overlay.json"), '{"format": 7}');
  const result = await gpuprep(["kb", "gpu", "h100"], cacheHome);
  assert.equal(result.code, 2);
  assert.match(result.stderr, /overlay .* does not match/);
  assert.match(result.stderr, /hint: run `gpuprep kb update` again or delete/);
});

/** A server that answers /whl/torch/ with `respond` and counts the bytes it managed to send. */
async function serveRaw(respond: (response: import("node:http").ServerResponse) => void) {
  const server = createServer((_request, response) => respond(response));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  assert.ok(address && typeof address === "object");
  return { server, base: `http://127.0.0.1:${address.port}/whl` };
}

test("kb update: a malformed JSON body is a one-line error, not an internal error", async () => {
  const cacheHome = mkdtempSync(join(tmpdir(), "gpuprep-kb-"));
  for (const body of ['{"files": [', '{"files": 7}', "null"]) {
    const { server, base } = await serveRaw((response) => {
      response.writeHead(200, { "content-type": "application/vnd.pypi.simple.v1+json" });
      response.end(body);
    });
    try {
      const result = await gpuprep(["kb", "update", "--index-url", base], cacheHome);
      assert.equal(result.code, 2, result.stderr);
      assert.match(result.stderr, /^gpuprep: error: the index page (is not valid JSON|has no files list)/);
      assert.doesNotMatch(result.stderr, /internal error|at .*\.js:\d+/);
    } finally {
      server.close();
    }
  }
});

test("kb update: a body that never ends is cut at the cap (64 MiB), a declared huge one refused at once", async () => {
  const cacheHome = mkdtempSync(join(tmpdir(), "gpuprep-kb-"));
  let sent = 0;
  const chunk = Buffer.alloc(1024 * 1024, "a");
  const flood = await serveRaw((response) => {
    response.writeHead(200, { "content-type": "text/html" });
    const pump = () => {
      while (!response.destroyed && sent < 1024 * 1024 * 1024) {
        sent += chunk.length;
        if (!response.write(chunk)) return void response.once("drain", pump);
      }
      response.end();
    };
    response.on("close", () => undefined);
    pump();
  });
  try {
    const result = await gpuprep(["kb", "update", "--index-url", flood.base], cacheHome);
    assert.equal(result.code, 2, result.stderr);
    assert.match(result.stderr, /sent more than 64 MiB, more than any index page/);
    assert.ok(sent < 256 * 1024 * 1024, `the server got to send ${sent} bytes`);
  } finally {
    flood.server.closeAllConnections();
    flood.server.close();
  }
  const declared = await serveRaw((response) => {
    response.writeHead(200, { "content-type": "text/html", "content-length": String(8 * 1024 ** 3) });
    response.write("<html>");
  });
  try {
    const result = await gpuprep(["kb", "update", "--index-url", declared.base], cacheHome);
    assert.equal(result.code, 2, result.stderr);
    assert.match(result.stderr, /sent more than 64 MiB/);
  } finally {
    declared.server.closeAllConnections();
    declared.server.close();
  }
});

test("the <a> pattern is linear: 1 MB of unclosed anchors is read in well under a second", () => {
  const started = performance.now();
  assert.deepEqual(filesFromIndexPage("<a ".repeat(350_000), "text/html"), []);
  assert.deepEqual(filesFromIndexPage("<a href=x<a" + "<a".repeat(500_000), "text/html"), []);
  assert.ok(performance.now() - started < 2000, `took ${performance.now() - started} ms`);
  assert.deepEqual(
    filesFromIndexPage('<a href="/x">torch-2.5.1+cu124-cp312-cp312-linux_x86_64.whl</a>', "text/html"),
    ["torch-2.5.1+cu124-cp312-cp312-linux_x86_64.whl"],
  );
  assert.equal(parseWheelName("torch-2.5.1%ZZ.whl"), null); // a malformed escape is no wheel, not a URIError
});
