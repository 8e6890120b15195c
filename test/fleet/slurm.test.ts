/**
 * gpuprep fleet against a real Slurm (Debian's slurmctld + 7 slurmd on this machine, see
 * slurm-cluster.ts). The nodes differ for real, through the TaskProlog:
 *   n1, n7  /usr/bin/python3 with Debian's torch 1.13.1 (the healthy pair)
 *   n2      a venv without torch first on PATH (another Python, no torch)
 *   n3      /usr/bin/python3 with CUDA_VISIBLE_DEVICES="" (empty)
 *   n4      a python3 that hangs
 *   n5      defined but its slurmd never started (down)
 *   n6      a python3 that prints garbage and exits 0
 * The merged report must name each of them with the right status or drift finding.
 */
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SlurmCluster, makeNodeEnvironments, SLURM_PARTS } from "./slurm-cluster.js";
import { requireParts, skipUnless } from "../support/needs.js";
import { schemaErrors } from "../support/json-schemas.js";
import type { FleetReport } from "../../src/fleet/types.js";

const MAIN = join(import.meta.dirname, "..", "..", "src", "cli", "main.js");
// Outside CI a missing Slurm skips these; on CI the hook below fails them, naming the packages.
const skip = skipUnless(...SLURM_PARTS);
const work = mkdtempSync(join(tmpdir(), "gpuprep-fleet-slurm-"));
const SYSTEM_PATH = "/usr/bin:/bin:/usr/sbin:/sbin";
const NODE_TIMEOUT = 20;
let cluster: SlurmCluster;

before(async () => {
  if (skip) return;
  requireParts(...SLURM_PARTS);
  const bins = makeNodeEnvironments(work);
  cluster = await SlurmCluster.start([
    { name: "n1", env: { PATH: SYSTEM_PATH } },
    { name: "n2", env: { PATH: `${bins.venvBin}:${SYSTEM_PATH}` } },
    { name: "n3", env: { PATH: SYSTEM_PATH, CUDA_VISIBLE_DEVICES: "" } },
    { name: "n4", env: { PATH: `${bins.hangBin}:${SYSTEM_PATH}` } },
    { name: "n5", start: false },
    { name: "n6", env: { PATH: `${bins.garbageBin}:${SYSTEM_PATH}` } },
    { name: "n7", env: { PATH: SYSTEM_PATH } },
  ]);
});

after(async () => {
  await cluster?.stop();
});

function gpuprep(args: string[], env: NodeJS.ProcessEnv = cluster.env, timeout = 180_000) {
  const started = Date.now();
  const run = spawnSync(process.execPath, [MAIN, ...args], { env, encoding: "utf8", timeout, cwd: work });
  return { ...run, seconds: (Date.now() - started) / 1000 };
}

function fleetIds(report: FleetReport): Map<string, string[]> {
  return new Map(report.fleetFindings.map((f) => [f.ruleId, f.nodes]));
}

test("fleet doctor --slurm: every node's drift or state is in the merged report", { skip }, () => {
  const html = join(work, "fleet.html");
  const junit = join(work, "fleet.xml");
  const snapshots = join(work, "snapshots");
  const run = gpuprep([
    "fleet",
    "doctor",
    "--slurm",
    "--node-timeout",
    String(NODE_TIMEOUT),
    "--json",
    "--html",
    html,
    "--junit",
    junit,
    "--save",
    snapshots,
  ]);
  assert.equal(run.status, 1, run.stderr);
  // The hung node is killed at its limit; the command never waits on it beyond that.
  assert.ok(run.seconds < NODE_TIMEOUT + 40, `took ${run.seconds}s`);
  const report = JSON.parse(run.stdout) as FleetReport & { schema: string; schemaVersion: number };
  assert.equal(report.schema, "gpuprep.fleet");
  assert.equal(report.schemaVersion, 1);
  const status = Object.fromEntries(report.nodes.map((n) => [n.node, n.status]));
  assert.deepEqual(status, { n1: "ok", n2: "ok", n3: "ok", n4: "hung", n5: "down", n6: "garbage", n7: "ok" });

  const ids = fleetIds(report);
  assert.deepEqual(ids.get("fleet-node-hung"), ["n4"]);
  assert.deepEqual(ids.get("fleet-node-down"), ["n5"]);
  assert.deepEqual(ids.get("fleet-node-garbage"), ["n6"]);
  assert.deepEqual(ids.get("fleet-torch-drift"), ["n2"], "n2's Python has no torch");
  assert.deepEqual(ids.get("fleet-python-drift"), ["n2"]);
  assert.deepEqual(ids.get("fleet-visible-devices-drift"), ["n3"]);
  assert.equal(report.fleetFindings.find((f) => f.ruleId === "fleet-torch-drift")?.severity, "error");

  // n1 and n7 are the same; n2 and n3 each differ from them.
  const groupOf = Object.fromEntries(report.nodes.map((n) => [n.node, n.group]));
  assert.equal(groupOf["n1"], groupOf["n7"]);
  assert.equal(report.groups.length, 3);
  assert.notEqual(groupOf["n2"], groupOf["n1"]);
  assert.notEqual(groupOf["n3"], groupOf["n1"]);
  const healthy = report.groups.find((g) => g.nodes.includes("n1"));
  assert.match(healthy?.fingerprint.torch ?? "", /^1\.13/);
  assert.equal(healthy?.fingerprint.python.split(" ")[1], "/usr/bin/python3");

  // Per-node findings are merged: the one about the missing torch lists n2 only.
  const noTorch = report.nodeFindings.find((f) => f.ruleId === "torch-not-installed");
  assert.deepEqual(noTorch?.nodes, ["n2"]);
  for (const f of report.nodeFindings) assert.equal(new Set(f.nodes).size, f.nodes.length);

  const xml = readFileSync(junit, "utf8");
  assert.equal((xml.match(/<testcase /g) ?? []).length, 7);
  assert.match(xml, /<testcase name="n5"[^>]*>\s*<skipped/);
  assert.match(xml, /<testcase name="n4"[^>]*>\s*<failure message="hung/);
  assert.match(readFileSync(html, "utf8"), /fleet-torch-drift/);

  // Replay: the saved snapshots rebuild the same groups and drift anywhere.
  assert.deepEqual(readdirSync(snapshots).sort(), ["n1.json", "n2.json", "n3.json", "n7.json"]);
  const replay = gpuprep(["fleet", "doctor", "--from", snapshots, "--json"]);
  assert.equal(replay.status, 1, replay.stderr);
  const again = JSON.parse(replay.stdout) as FleetReport;
  assert.deepEqual(
    again.groups.map((g) => g.nodes),
    report.groups.map((g) => g.nodes),
  );
  const drift = (r: FleetReport) =>
    r.fleetFindings.filter((f) => !f.ruleId.startsWith("fleet-node-")).map((f) => [f.ruleId, f.nodes]);
  assert.deepEqual(drift(again), drift(report));
});

test("fleet doctor --slurm text names the nodes; --nodelist narrows the run", { skip }, () => {
  const run = gpuprep([
    "fleet",
    "doctor",
    "--slurm",
    "--nodelist",
    "n[1-3]",
    "--node-timeout",
    String(NODE_TIMEOUT),
  ]);
  assert.equal(run.status, 1, run.stderr);
  assert.match(run.stdout, /3 nodes via Slurm/);
  assert.match(run.stdout, /\[fleet-torch-drift\]/);
  assert.match(run.stdout, /torch is not installed on 1 of 3 nodes \(n2\)/);
  assert.match(run.stdout, /It is empty on n3/);
  assert.doesNotMatch(run.stdout, /\bn4\b|\bn6\b/);
});

test("bad input: no Slurm on PATH, an unknown partition, an unknown node: one line, exit 2", { skip }, () => {
  const noSlurm = gpuprep(["fleet", "doctor", "--slurm"], { ...cluster.env, PATH: "/nonexistent" });
  assert.equal(noSlurm.status, 2);
  assert.match(
    noSlurm.stderr,
    /^gpuprep: error: sinfo is not on PATH: this machine has no Slurm client commands\n {2}hint: /,
  );
  const partition = gpuprep(["fleet", "doctor", "--slurm", "--partition", "nope"]);
  assert.equal(partition.status, 2);
  assert.match(
    partition.stderr,
    /^gpuprep: error: sinfo .*failed|^gpuprep: error: Slurm lists no nodes in partition nope/,
  );
  const node = gpuprep(["fleet", "doctor", "--slurm", "--nodelist", "n99"]);
  assert.equal(node.status, 2);
  assert.match(node.stderr, /^gpuprep: error: Slurm does not know node n99/);
  // An allocation srun refuses (more nodes than the partition has): one line, exit 2.
  const refused = gpuprep(["fleet", "doctor", "--slurm", "--nodes", "50", "--wait", "3"]);
  assert.equal(refused.status, 2, refused.stdout);
  assert.match(refused.stderr, /^gpuprep: error: srun ran on no node: .*(Unable to allocate|not available)/);
  for (const r of [noSlurm, partition, node, refused])
    assert.doesNotMatch(r.stderr, /\n\s+at /, "no stack trace");
});

test(
  "--submit writes and submits an sbatch job; fleet collect JOBID merges its output",
  { skip },
  async () => {
    const jobDir = join(work, "jobs");
    const submit = gpuprep([
      "fleet",
      "doctor",
      "--slurm",
      "--nodelist",
      "n1,n2,n7",
      "--submit",
      "--job-dir",
      jobDir,
      "--node-timeout",
      String(NODE_TIMEOUT),
      "--json",
    ]);
    assert.equal(submit.status, 0, submit.stderr);
    const job = JSON.parse(submit.stdout) as { jobId: string; script: string; asked: string[] };
    assert.deepEqual(schemaErrors(job), [], "the job document against schemas/gpuprep.fleet.job.v1");
    assert.match(job.jobId, /^\d+$/);
    // The allocation reaches sbatch as arguments (no #SBATCH line holds a user's value): Slurm's own
    // record of the job shows the node list it was given.
    assert.doesNotMatch(readFileSync(job.script, "utf8"), /#SBATCH/);
    const shown = spawnSync("scontrol", ["show", "job", job.jobId], {
      env: cluster.env,
      encoding: "utf8",
    }).stdout;
    assert.match(shown, /ReqNodeList=(n1,n2,n7|n\[1-2,7\])\s/, shown);
    assert.deepEqual(job.asked, ["n1", "n2", "n7"]);
    const deadline = Date.now() + 120_000;
    while (Date.now() < deadline) {
      const queued = spawnSync("squeue", ["-h", "-j", job.jobId], {
        env: cluster.env,
        encoding: "utf8",
      }).stdout.trim();
      if (queued === "") break;
      const early = gpuprep(["fleet", "collect", job.jobId, "--job-dir", jobDir]);
      if (early.status === 2)
        assert.match(
          early.stderr,
          /is (PENDING|RUNNING|COMPLETING|CONFIGURING); its results are not complete yet/,
        );
      await new Promise((r) => setTimeout(r, 1000));
    }
    const collect = gpuprep(["fleet", "collect", job.jobId, "--job-dir", jobDir, "--json"]);
    assert.equal(collect.status, 1, collect.stderr);
    const report = JSON.parse(collect.stdout) as FleetReport;
    assert.deepEqual(schemaErrors(report), [], "fleet collect against schemas/gpuprep.fleet.v1");
    assert.deepEqual(
      report.nodes.map((n) => [n.node, n.status]),
      [
        ["n1", "ok"],
        ["n2", "ok"],
        ["n7", "ok"],
      ],
    );
    assert.deepEqual(fleetIds(report).get("fleet-torch-drift"), ["n2"]);
    const missing = gpuprep(["fleet", "collect", "424242", "--job-dir", jobDir]);
    assert.equal(missing.status, 2);
    assert.match(missing.stderr, /no gpuprep fleet job 424242/);
  },
);

test(
  "fleet validate --slurm --allreduce: each node validated, a 2-node gloo all-reduce through torchrun",
  { skip },
  () => {
    const run = gpuprep(
      [
        "fleet",
        "validate",
        "--slurm",
        "--nodelist",
        "n1,n7",
        "--only",
        "extensions",
        "--allreduce",
        "--node-timeout",
        "120",
        "--json",
      ],
      cluster.env,
      400_000,
    );
    assert.ok(run.status === 0 || run.status === 1, run.stderr);
    const report = JSON.parse(run.stdout) as FleetReport;
    assert.equal(report.mode, "validate");
    const allreduce = report.fleetFindings.find((f) => f.ruleId === "fleet-allreduce");
    assert.ok(allreduce, "the all-reduce is reported");
    assert.equal(allreduce.severity, "info", allreduce.message + JSON.stringify(allreduce.evidence));
    assert.match(allreduce.message, /^2 ranks on 2 nodes all-reduced correctly over gloo/);
    assert.ok(allreduce.evidence.some((e) => /busbw \d+\.\d+ GB\/s/.test(e.value)));
    // Debian's torch is CPU-only: the validate check for a CUDA build fails on both nodes, merged once.
    const cudaBuild = report.nodeFindings.find((f) => f.ruleId === "validate/check.cuda-build");
    assert.deepEqual(cudaBuild?.nodes, ["n1", "n7"]);
  },
);
