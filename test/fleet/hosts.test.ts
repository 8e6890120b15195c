/**
 * gpuprep fleet --hosts against a real sshd on loopback (sshd.ts): host aliases gpu01..gpu05 point
 * at it, each with its own environment, gpu99 at a port nothing listens on. The same merged report
 * through plain ssh (with a fan-out limit), pdsh and ClusterShell's clush:
 *   gpu01, gpu04  /usr/bin/python3 with Debian's torch
 *   gpu02         a venv without torch
 *   gpu03         CUDA_VISIBLE_DEVICES="" (empty)
 *   gpu05         a python3 that hangs (killed at --node-timeout)
 *   gpu99         no sshd there: unreachable, with ssh's own reason
 * The interpreter on each host is chosen by a variable the host's sessions get (GPUPREP_TEST_PYTHON,
 * read by a two-line dispatcher passed as --python), since root's ~/.bashrc resets PATH.
 */
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { chmodSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { makeNodeEnvironments } from "./slurm-cluster.js";
import { CLUSH, PDSH, SSHD_PARTS, SshCluster } from "./sshd.js";
import { missing, requireParts, skipUnless } from "../support/needs.js";
import type { FleetReport } from "../../src/fleet/types.js";

const MAIN = join(import.meta.dirname, "..", "..", "src", "cli", "main.js");
const skip = skipUnless(...SSHD_PARTS);
const work = mkdtempSync(join(tmpdir(), "gpuprep-fleet-hosts-"));
const NODE_TIMEOUT = 25;
let cluster: SshCluster;
let dispatcher: string;
let logging: string;

before(async () => {
  if (skip) return;
  requireParts(...SSHD_PARTS);
  const bins = makeNodeEnvironments(work);
  dispatcher = join(work, "python-by-host");
  writeFileSync(dispatcher, '#!/bin/sh\nexec "${GPUPREP_TEST_PYTHON:-/usr/bin/python3}" "$@"\n');
  chmodSync(dispatcher, 0o755);
  // Records when each host's interpreter ran (start and end, ns), to count the connections at once.
  logging = join(work, "python-logged");
  writeFileSync(
    logging,
    `#!/bin/sh\ns=$(date +%s%N); sleep 1; echo "$s $(date +%s%N)" >> ${join(work, "fanout.log")}\nexec /usr/bin/python3 "$@"\n`,
  );
  chmodSync(logging, 0o755);
  cluster = await SshCluster.start(
    [
      { alias: "gpu01" },
      { alias: "gpu02", env: { GPUPREP_TEST_PYTHON: join(bins.venvBin, "python3") } },
      { alias: "gpu03", env: { CUDA_VISIBLE_DEVICES: "" } },
      { alias: "gpu04" },
      { alias: "gpu05", env: { GPUPREP_TEST_PYTHON: join(bins.hangBin, "python3") } },
      { alias: "gpu99", dead: true },
    ],
    ["GPUPREP_*", "CUDA_VISIBLE_DEVICES"],
  );
});

after(() => cluster?.stop());

function gpuprep(args: string[]) {
  const started = Date.now();
  const run = spawnSync(process.execPath, [MAIN, ...args], { encoding: "utf8", timeout: 240_000, cwd: work });
  return { ...run, seconds: (Date.now() - started) / 1000 };
}

function fleetOver(launcher: string, extra: string[] = []) {
  return gpuprep([
    "fleet",
    "doctor",
    "--hosts",
    "gpu[01-05],gpu99",
    "--launcher",
    launcher,
    "--ssh-config",
    cluster.config,
    "--python",
    dispatcher,
    "--node-timeout",
    String(NODE_TIMEOUT),
    "--json",
    ...extra,
  ]);
}

/** What must hold whatever carried the probe: the same statuses, drift and reasons. */
function assertFleet(run: ReturnType<typeof gpuprep>, launcher: string): FleetReport {
  assert.equal(run.status, 1, run.stderr);
  assert.ok(run.seconds < NODE_TIMEOUT + 60, `took ${run.seconds}s`);
  const report = JSON.parse(run.stdout) as FleetReport;
  assert.match(report.transport, new RegExp(`6 hosts over ${launcher}`));
  const status = Object.fromEntries(report.nodes.map((n) => [n.node, n.status]));
  assert.deepEqual(status, {
    gpu01: "ok",
    gpu02: "ok",
    gpu03: "ok",
    gpu04: "ok",
    gpu05: "hung",
    gpu99: "unreachable",
  });
  const reason = (node: string) => report.nodes.find((n) => n.node === node)?.reason ?? "";
  assert.match(reason("gpu05"), new RegExp(`${NODE_TIMEOUT}s per-node limit`));
  assert.match(reason("gpu99"), /Connection refused|connect to host/);
  const ids = Object.fromEntries(report.fleetFindings.map((f) => [f.ruleId, f]));
  assert.deepEqual(ids["fleet-torch-drift"]?.nodes, ["gpu02"]);
  assert.deepEqual(ids["fleet-visible-devices-drift"]?.nodes, ["gpu03"]);
  assert.deepEqual(ids["fleet-node-hung"]?.nodes, ["gpu05"]);
  assert.deepEqual(ids["fleet-node-unreachable"]?.nodes, ["gpu99"]);
  const groupOf = Object.fromEntries(report.nodes.map((n) => [n.node, n.group]));
  assert.equal(groupOf["gpu01"], groupOf["gpu04"]);
  // Node ranges are folded wherever nodes are listed.
  assert.ok(
    report.fleetFindings.some((f) => f.evidence.some((e) => /gpu\[01,03-04\]/.test(e.value))),
    "folded evidence",
  );
  return report;
}

test(
  "--hosts over ssh: each host's drift, a hung and an unreachable host, node ranges folded",
  { skip },
  () => {
    const html = join(work, "hosts.html");
    const report = assertFleet(fleetOver("ssh", ["--fanout", "3", "--html", html]), "ssh");
    assert.match(readFileSync(html, "utf8"), /gpu\[01,03-04\]/);
    const text = fleetOver("ssh", ["--fanout", "3"]).stdout;
    assert.ok(report.nodes.length === 6 && text.length > 0);
  },
);

test("--fanout 2: never more than two hosts at once", { skip }, () => {
  const log = join(work, "fanout.log");
  writeFileSync(log, "");
  const run = gpuprep([
    "fleet",
    "doctor",
    "--hosts",
    "gpu[01-04]",
    "--launcher",
    "ssh",
    "--fanout",
    "2",
    "--fast",
    "--ssh-config",
    cluster.config,
    "--python",
    logging,
    "--json",
  ]);
  assert.ok(run.status === 0 || run.status === 1, run.stderr);
  const spans = readFileSync(log, "utf8")
    .trim()
    .split("\n")
    .map((l) => l.split(" ").map(Number) as [number, number]);
  assert.equal(spans.length, 4);
  const most = Math.max(...spans.map(([s]) => spans.filter(([a, b]) => a <= s && s < b).length));
  assert.ok(most <= 2, `${most} hosts ran at once`);
  assert.ok(most === 2, "and two did run together");
});

test("--hosts through pdsh: the same report", { skip: skip || missing(PDSH) || false }, () => {
  assertFleet(fleetOver("pdsh"), "pdsh");
});

test("--hosts through clush: the same report", { skip: skip || missing(CLUSH) || false }, () => {
  assertFleet(fleetOver("clush"), "clush");
});

test("bad --hosts and --launcher: one line, exit 2", () => {
  const list = gpuprep(["fleet", "doctor", "--hosts", "gpu[01-"]);
  assert.equal(list.status, 2);
  assert.match(list.stderr, /^gpuprep: error: --hosts "gpu\[01-": unbalanced brackets\n {2}hint: /);
  const launcher = gpuprep(["fleet", "doctor", "--hosts", "gpu01", "--launcher", "rsh"]);
  assert.equal(launcher.status, 2);
  assert.match(launcher.stderr, /--launcher "rsh" is not one of auto, ssh, pdsh, clush/);
  const both = gpuprep(["fleet", "doctor", "--hosts", "gpu01", "--slurm"]);
  assert.equal(both.status, 2);
});
