/**
 * init --fetch (issue 25 item 2): the project's locked wheels, served by a loopback HTTP server
 * (real zips around the nvcc 13.0 builds of test/fixtures/wheels), read for the planned machine
 * and said as the plan's "locked wheels" decision, which SETUP.md lists; a server that does not
 * answer is said too. Without the flag nothing is fetched.
 */
import { test, after } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { runCliAsync as runCli } from "../remote/cli-async.js";
import { startServer, type TestServer } from "../support/http-server.js";
import { makeWheel } from "../remote/wheels.js";

const dir = mkdtempSync(join(tmpdir(), "gpuprep-init-lock-"));
const wheels = join(dir, "wheels");
const blackwellOnly = makeWheel(wheels, {
  name: "bwkit",
  version: "1.0",
  tag: "cp312-cp312-manylinux_2_28_x86_64",
  libs: { "bwkit/libsm100a.so": "libsm100a.so" },
});
const servers: TestServer[] = [];
after(async () => {
  for (const server of servers) await server.close();
});

function project(name: string, base: string): string {
  const root = join(dir, name);
  mkdirSync(root, { recursive: true });
  writeFileSync(
    join(root, "pyproject.toml"),
    `[project]\nname = "${name}"\nversion = "0.1.0"\nrequires-python = ">=3.12"\ndependencies = ["torch", "bwkit"]\n`,
  );
  writeFileSync(
    join(root, "uv.lock"),
    `version = 1\n\n[[package]]\nname = "bwkit"\nversion = "1.0"\nsource = { registry = "${base}/simple" }\nwheels = [{ url = "${base}/${basename(blackwellOnly)}" }]\n`,
  );
  return root;
}

interface Decision {
  topic: string;
  choice: string;
  reason: string;
}

async function init(root: string, ...flags: string[]) {
  const args = ["init", "--project", root, "--target", "h100", "--driver", "580", "--strategy", "native"];
  const result = await runCli([...args, "--python", "3.12", "--dry-run", "--json", ...flags]);
  assert.equal(result.code, 0, result.stderr);
  const json = JSON.parse(result.stdout) as {
    plan: { decisions: Decision[] };
    files: { path: string; content: string }[];
  };
  return {
    decision: json.plan.decisions.find((d) => d.topic === "locked wheels"),
    setup: json.files.find((f) => f.path === "SETUP.md")!.content,
  };
}

test("init --fetch: a locked wheel with only sm_100a code is said in the plan and SETUP.md for an H100", async () => {
  const server = await startServer(wheels, { ranges: true });
  servers.push(server);
  const root = project("firing", server.url);
  const { decision, setup } = await init(root, "--fetch");
  assert.equal(decision?.choice, "1 of 1 wheels read from uv.lock cannot run on sm_90");
  assert.match(decision.reason, /no code for sm_90: bwkit 1\.0 \(bwkit\/libsm100a\.so: sm_100a\)/);
  assert.match(decision.reason, /for x86_64, Python 3\.12/);
  assert.match(setup, /- \*\*locked wheels\*\*: 1 of 1 wheels read from uv\.lock cannot run on sm_90\./);
  assert.ok(server.requests.length > 0);
  // Without --fetch: no decision, nothing fetched.
  const before = server.requests.length;
  assert.equal((await init(root)).decision, undefined);
  assert.equal(server.requests.length, before);
});

test("init --fetch with the lock's server down: the wheel is named as not reached", async () => {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, "127.0.0.1", resolve));
  const port = (probe.address() as { port: number }).port;
  await new Promise((resolve) => probe.close(resolve));
  const { decision } = await init(project("down", `http://127.0.0.1:${port}`), "--fetch");
  assert.equal(decision?.choice, "no wheel with CUDA code read from uv.lock");
  assert.match(decision.reason, /not reached or not readable, so not checked: bwkit \(.*127\.0\.0\.1/);
});
