/**
 * 64 simulated nodes on a real Slurm (64 slurmd of Debian's multiple-slurmd build on this
 * machine, see slurm-cluster.ts): one `srun --ntasks-per-node=1` over 63 responsive nodes with
 * --fast probes (no torch import, so it stays quick on 2 cores), two of them with a Python that
 * has no torch (TaskProlog PATH), one never started.
 */
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SlurmCluster, makeNodeEnvironments, SLURM_PARTS, type SimNode } from "./slurm-cluster.js";
import { requireParts, skipUnless } from "../support/needs.js";
import type { FleetReport } from "../../src/fleet/types.js";

const MAIN = join(import.meta.dirname, "..", "..", "src", "cli", "main.js");
// Outside CI a missing Slurm skips these; on CI the hook below fails them, naming the packages.
const skip = skipUnless(...SLURM_PARTS);
const SYSTEM_PATH = "/usr/bin:/bin:/usr/sbin:/sbin";
let cluster: SlurmCluster;

before(async () => {
  if (skip) return;
  requireParts(...SLURM_PARTS);
  const bins = makeNodeEnvironments(mkdtempSync(join(tmpdir(), "gpuprep-fleet-64-")));
  const nodes: SimNode[] = Array.from({ length: 64 }, (_, i) => {
    const name = `s${String(i + 1).padStart(2, "0")}`;
    if (name === "s40") return { name, start: false };
    const path = name === "s17" || name === "s63" ? `${bins.venvBin}:${SYSTEM_PATH}` : SYSTEM_PATH;
    return { name, env: { PATH: path } };
  });
  cluster = await SlurmCluster.start(nodes, { cpus: 1 });
});
after(async () => {
  await cluster?.stop();
});

test("64 nodes: one srun, 63 answers merged, the two drifted nodes and the down one named", { skip }, () => {
  const run = spawnSync(
    process.execPath,
    [MAIN, "fleet", "doctor", "--slurm", "--fast", "--node-timeout", "120", "--json"],
    {
      env: cluster.env,
      encoding: "utf8",
      timeout: 300_000,
      maxBuffer: 1 << 28,
    },
  );
  assert.equal(run.status, 1, run.stderr);
  const report = JSON.parse(run.stdout) as FleetReport;
  assert.equal(report.summary.nodes, 64);
  assert.equal(report.summary.ok, 63);
  assert.deepEqual(
    report.nodes.filter((n) => n.status !== "ok").map((n) => [n.node, n.status]),
    [["s40", "down"]],
  );
  assert.deepEqual(
    report.groups.map((g) => g.nodes.length),
    [61, 2],
  );
  const ids = Object.fromEntries(report.fleetFindings.map((f) => [f.ruleId, f.nodes]));
  assert.deepEqual(ids["fleet-torch-drift"], ["s17", "s63"]);
  assert.deepEqual(ids["fleet-node-down"], ["s40"]);
});
