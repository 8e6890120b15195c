/**
 * fleet doctor/validate as a cluster admin runs it, on a real Slurm (slurm-cluster.ts): the cases
 * issue 26 found misreported, each made for real.
 *   a1, a2  /usr/bin/python3 with Debian's torch 1.13.1
 *   a3      a python3 whose libpython is missing (a real ELF built here; the loader exits 127)
 *   a4      a python3 that hangs: crashed mid-run (slurmd and tasks killed, node marked DOWN)
 *   a5      torch's import takes 65 s (a sitecustomize on PYTHONPATH): more than doctor's 60 s
 *   a6      in a MAINT reservation
 *   a7      a venv without torch
 * plus a partition "closed" that is DOWN, and SchedulerParameters=defer so a submitted job can be
 * held before it starts (to drain a node while it waits).
 */
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SlurmCluster, makeNodeEnvironments, SLURM_PARTS } from "./slurm-cluster.js";
import { aptPart, commandExists, requireParts, skipUnless } from "../support/needs.js";
import type { FleetReport } from "../../src/fleet/types.js";

const MAIN = join(import.meta.dirname, "..", "..", "src", "cli", "main.js");
const GCC = aptPart("gcc", "gcc libc6-dev", () => commandExists("gcc"));
const skip = skipUnless(...SLURM_PARTS, GCC);
const work = mkdtempSync(join(tmpdir(), "gpuprep-fleet-admin-"));
const SYSTEM_PATH = "/usr/bin:/bin:/usr/sbin:/sbin";
/** Seconds torch's import takes on a5: more than doctor's fixed 60 s child limit. */
const SLOW_IMPORT = 65;
let cluster: SlurmCluster;

/**
 * A python3 that is a real dynamically linked program needing libpython3.99.so.1.0, built against
 * a stub library that is then deleted: running it fails in the loader, exit 127, as a conda or
 * pyenv Python does when its libpython is gone.
 */
function pythonWithoutLibpython(dir: string): string {
  const bin = join(dir, "no-libpython-bin");
  mkdirSync(bin);
  writeFileSync(join(dir, "lib.c"), "int py_stub(void) { return 0; }\n");
  writeFileSync(join(dir, "main.c"), "int py_stub(void);\nint main(void) { return py_stub(); }\n");
  const lib = join(dir, "libpython3.99.so.1.0");
  const gcc = (args: string[]) => {
    const run = spawnSync("gcc", args, { encoding: "utf8" });
    if (run.status !== 0) throw new Error(`gcc ${args.join(" ")}: ${run.stderr}`);
  };
  gcc(["-shared", "-fPIC", "-Wl,-soname,libpython3.99.so.1.0", "-o", lib, join(dir, "lib.c")]);
  gcc(["-o", join(bin, "python3"), join(dir, "main.c"), lib]);
  rmSync(lib);
  return bin;
}

/** A sitecustomize that makes `import torch` (and only that) take SLOW_IMPORT seconds. */
function slowTorchImport(dir: string): string {
  const site = join(dir, "slow-site");
  mkdirSync(site);
  writeFileSync(
    join(site, "sitecustomize.py"),
    [
      "import sys, time",
      "class SlowTorch:",
      "    def find_spec(self, name, path=None, target=None):",
      '        if name == "torch":',
      "            sys.meta_path.remove(self)",
      `            time.sleep(${SLOW_IMPORT})`,
      "        return None",
      "sys.meta_path.insert(0, SlowTorch())",
      "",
    ].join("\n"),
  );
  return site;
}

before(async () => {
  if (skip) return;
  requireParts(...SLURM_PARTS, GCC);
  const bins = makeNodeEnvironments(work);
  const noLibpython = pythonWithoutLibpython(work);
  chmodSync(join(noLibpython, "python3"), 0o755);
  cluster = await SlurmCluster.start(
    [
      { name: "a1", env: { PATH: SYSTEM_PATH } },
      { name: "a2", env: { PATH: SYSTEM_PATH } },
      { name: "a3", env: { PATH: `${noLibpython}:${SYSTEM_PATH}` } },
      { name: "a4", env: { PATH: `${bins.hangBin}:${SYSTEM_PATH}` } },
      { name: "a5", env: { PATH: SYSTEM_PATH, PYTHONPATH: slowTorchImport(work) } },
      { name: "a6", env: { PATH: SYSTEM_PATH } },
      { name: "a7", env: { PATH: `${bins.venvBin}:${SYSTEM_PATH}` } },
    ],
    { conf: ["SchedulerParameters=defer,sched_interval=3", "PartitionName=closed Nodes=a1,a2 State=DOWN"] },
  );
  cluster.slurm("scontrol", [
    "create",
    "reservation",
    "ReservationName=maint",
    "Nodes=a6",
    "StartTime=now",
    "Duration=120",
    "Users=root",
    "Flags=MAINT",
  ]);
});

after(async () => {
  await cluster?.stop();
});

function gpuprep(args: string[], timeout = 240_000) {
  const started = Date.now();
  const run = spawnSync(process.execPath, [MAIN, ...args], {
    env: cluster.env,
    encoding: "utf8",
    timeout,
    cwd: work,
  });
  return { ...run, seconds: (Date.now() - started) / 1000 };
}

function json(run: { stdout: string; stderr: string }): FleetReport {
  try {
    return JSON.parse(run.stdout) as FleetReport;
  } catch {
    throw new Error(`not JSON: ${run.stdout.slice(0, 300)} ${run.stderr.slice(0, 500)}`);
  }
}

const byNode = (report: FleetReport) => Object.fromEntries(report.nodes.map((n) => [n.node, n]));
const fleetIds = (report: FleetReport) => Object.fromEntries(report.fleetFindings.map((f) => [f.ruleId, f]));

test("a refused partition or node list: one line with Slurm's reason, exit 2, at once", { skip }, () => {
  const down = gpuprep(["fleet", "doctor", "--slurm", "-p", "closed"]);
  assert.equal(down.status, 2, down.stdout);
  assert.match(
    down.stderr,
    /^gpuprep: error: partition closed is DOWN: Slurm starts no job there\n {2}hint: /,
  );
  // A node list srun refuses (more memory than any node has): srun's own words, not 2 x "unreachable".
  const memory = gpuprep([
    "fleet",
    "doctor",
    "--slurm",
    "--nodelist",
    "a1,a2",
    "--wait",
    "30",
    "--",
    "--mem=100000000",
  ]);
  assert.equal(memory.status, 2, memory.stdout);
  assert.match(memory.stderr, /^gpuprep: error: srun ran on no node: .*(Memory specification|not available)/);
  assert.ok(memory.seconds < 25, `took ${memory.seconds}s: the refusal must not wait for --wait`);
  // With -p: a partition srun takes, a request it refuses (no such GRES here).
  const gres = gpuprep(["fleet", "doctor", "--slurm", "-p", "debug", "--nodes", "2", "--", "--gres=gpu:1"]);
  assert.equal(gres.status, 2, gres.stdout);
  assert.match(gres.stderr, /^gpuprep: error: srun ran on no node: .*(gres|Invalid generic resource)/i);
  for (const r of [down, memory, gres]) assert.doesNotMatch(r.stderr, /\n\s+at /, "no stack trace");
});

test("a node in a MAINT reservation: named as such, checked with -- --reservation=maint", { skip }, () => {
  const without = gpuprep(["fleet", "doctor", "--slurm", "--fast", "--nodelist", "a1,a6", "--json"]);
  const report = json(without);
  assert.equal(byNode(report)["a6"]?.status, "down");
  assert.match(
    byNode(report)["a6"]?.reason ?? "",
    /in maintenance reservation maint; pass -- --reservation=maint to check it/,
  );
  assert.match(fleetIds(report)["fleet-node-down"]?.fix.summary ?? "", /--reservation=NAME/);
  assert.doesNotMatch(fleetIds(report)["fleet-node-down"]?.fix.summary ?? "", /State=RESUME/);
  // Only the reserved node, without the reservation: nothing checked is an error, not "exit 0".
  const none = gpuprep(["fleet", "doctor", "--slurm", "--fast", "--nodelist", "a6", "--json"]);
  assert.equal(none.status, 1, none.stderr);
  assert.ok(fleetIds(json(none))["fleet-nothing-checked"]);
  // The docs' example: in the reservation, the node is checked (and the nodes outside it are not).
  const inside = gpuprep([
    "fleet",
    "doctor",
    "--slurm",
    "--fast",
    "--nodelist",
    "a1,a6",
    "--json",
    "--",
    "--reservation=maint",
  ]);
  const checked = json(inside);
  assert.equal(byNode(checked)["a6"]?.status, "ok", inside.stderr);
  assert.match(byNode(checked)["a1"]?.reason ?? "", /not in reservation maint/);
});

test(
  "a node crashed mid-run is a failed node with Slurm's node failure, not hung; the others finish",
  { skip },
  async () => {
    const child = spawn(
      process.execPath,
      [MAIN, "fleet", "doctor", "--slurm", "--fast", "--nodelist", "a1,a4", "--node-timeout", "90", "--json"],
      {
        env: cluster.env,
        cwd: work,
      },
    );
    let stdout = "";
    child.stdout.on("data", (c: Buffer) => (stdout += c.toString()));
    const done = new Promise<number | null>((resolve) => child.on("close", resolve));
    const started = Date.now();
    // Wait until the step runs on a4 (its python3 is hanging there), then crash the node.
    const deadline = Date.now() + 60_000;
    while (Date.now() < deadline && !/a4/.test(cluster.slurm("squeue", ["-h", "-s", "-o", "%N"])))
      await new Promise((r) => setTimeout(r, 500));
    await new Promise((r) => setTimeout(r, 3000));
    cluster.crashNode("a4");
    const status = await done;
    const seconds = (Date.now() - started) / 1000;
    const report = JSON.parse(stdout) as FleetReport;
    assert.equal(status, 1);
    assert.ok(seconds < 80, `took ${seconds}s: the crash must not wait for the 90 s node limit`);
    assert.equal(byNode(report)["a1"]?.status, "ok", "--no-kill: the healthy node finishes");
    assert.equal(byNode(report)["a4"]?.status, "failed");
    assert.match(
      byNode(report)["a4"]?.reason ?? "",
      /the node failed during the run \(srun: Node failure on a4\)/,
    );
    assert.match(fleetIds(report)["fleet-node-failed"]?.fix.summary ?? "", /node itself failed/);
    cluster.slurm("scontrol", ["update", "NodeName=a4", "State=RESUME"]);
  },
);

test("a missing libpython is exit 127 with the loader's line kept, not 'python3 not found'", { skip }, () => {
  const run = gpuprep(["fleet", "doctor", "--slurm", "--fast", "--nodelist", "a1,a3", "--json"]);
  const report = json(run);
  assert.equal(byNode(report)["a3"]?.status, "failed");
  assert.match(
    byNode(report)["a3"]?.reason ?? "",
    /^python3 cannot start there \(exit 127\): .*error while loading shared libraries: libpython3\.99\.so\.1\.0: cannot open shared object file/,
  );
});

test(
  `an import of torch slower than 60 s passes when --node-timeout allows it (${SLOW_IMPORT} s here)`,
  { skip },
  () => {
    const run = gpuprep(
      ["fleet", "doctor", "--slurm", "--nodelist", "a5", "--node-timeout", "110", "--json"],
      300_000,
    );
    const report = json(run);
    assert.equal(byNode(report)["a5"]?.status, "ok", run.stderr);
    assert.ok(
      !report.nodeFindings.some((f) => f.ruleId === "torch-import-failed"),
      JSON.stringify(report.nodeFindings.map((f) => f.message)),
    );
    assert.deepEqual(report.groups[0]?.fingerprint.torch.split(".").slice(0, 2), ["1", "13"]);
    assert.notEqual(
      report.groups[0]?.fingerprint.torchArchList.startsWith("unknown"),
      true,
      "torch was imported",
    );
  },
);

test(
  "--submit: a node drained while the job waits; collect says so, --drop-unavailable runs it on the rest",
  { skip },
  async () => {
    const jobDir = join(work, "jobs");
    const submit = gpuprep([
      "fleet",
      "doctor",
      "--slurm",
      "--fast",
      "--nodelist",
      "a1,a2",
      "--submit",
      "--job-dir",
      jobDir,
      "--json",
    ]);
    assert.equal(submit.status, 0, submit.stderr);
    const { jobId, asked } = JSON.parse(submit.stdout) as { jobId: string; asked: string[] };
    assert.deepEqual(asked, ["a1", "a2"]);
    // defer: the job is not started at submission; held, it waits while a2 is drained.
    cluster.slurm("scontrol", ["hold", jobId]);
    cluster.slurm("scontrol", ["update", "NodeName=a2", "State=DRAIN", "Reason=bad gpu"]);
    cluster.slurm("scontrol", ["release", jobId]);
    await new Promise((r) => setTimeout(r, 4000));
    const waiting = gpuprep(["fleet", "collect", jobId, "--job-dir", jobDir]);
    assert.equal(waiting.status, 2);
    assert.match(
      waiting.stderr,
      new RegExp(`^gpuprep: error: job ${jobId} waits for a2 \\(drained: bad gpu\\)`),
    );
    assert.match(waiting.stderr, /--drop-unavailable/);
    const dropped = gpuprep(["fleet", "collect", jobId, "--job-dir", jobDir, "--drop-unavailable"]);
    assert.equal(dropped.status, 2);
    assert.match(
      dropped.stderr,
      /gpuprep took it out of the job \(scontrol update JobId=\d+ NodeList=a1 NumNodes=1 NumTasks=1\)/,
    );
    const deadline = Date.now() + 120_000;
    while (Date.now() < deadline && cluster.slurm("squeue", ["-h", "-j", jobId]).trim() !== "")
      await new Promise((r) => setTimeout(r, 1000));
    const collect = gpuprep(["fleet", "collect", jobId, "--job-dir", jobDir, "--json"]);
    const report = json(collect);
    assert.equal(byNode(report)["a1"]?.status, "ok", collect.stderr);
    assert.equal(byNode(report)["a2"]?.status, "down");
    assert.match(
      byNode(report)["a2"]?.reason ?? "",
      /drained: bad gpu: taken out of the job while it waited/,
    );
    // The next test (the all-reduce) needs a2 back, not still drained.
    await cluster.resumeNode("a2");
  },
);

test(
  "--allreduce leaves out a node without torch (named), and with one torch node left says torch, not the network",
  { skip },
  () => {
    const run = gpuprep(
      [
        "fleet",
        "validate",
        "--slurm",
        "--nodelist",
        "a1,a2,a7",
        "--only",
        "extensions",
        "--allreduce",
        "--node-timeout",
        "120",
        "--json",
      ],
      400_000,
    );
    const allreduce = fleetIds(json(run))["fleet-allreduce"];
    assert.equal(allreduce?.severity, "info", `${allreduce?.message} ${JSON.stringify(allreduce?.evidence)}`);
    assert.match(
      allreduce?.message ?? "",
      /^2 ranks on 2 nodes \(left out: a7\) all-reduced correctly over gloo/,
    );
    assert.ok(
      allreduce?.evidence.some((e) => e.label === "a7 (left out)" && e.value === "torch is not installed"),
    );
    const alone = gpuprep(
      [
        "fleet",
        "validate",
        "--slurm",
        "--nodelist",
        "a1,a7",
        "--only",
        "extensions",
        "--allreduce",
        "--node-timeout",
        "120",
        "--json",
      ],
      400_000,
    );
    const notRun = fleetIds(json(alone))["fleet-allreduce"];
    assert.equal(notRun?.severity, "error");
    assert.match(
      notRun?.message ?? "",
      /^The all-reduce was not run: it needs two nodes whose torch imports/,
    );
    assert.match(notRun?.fix.summary ?? "", /Install the same torch/);
    assert.doesNotMatch(notRun?.fix.summary ?? "", /NCCL_SOCKET_IFNAME/);
  },
);
