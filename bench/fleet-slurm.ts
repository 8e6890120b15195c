/**
 * Wall time of `gpuprep fleet doctor --slurm` on 3, 16 and 64 simulated nodes: a real Slurm on
 * this machine (test/fleet/slurm-cluster.ts: slurmctld and one slurmd per node, every node
 * /usr/bin/python3 with Debian's torch 1.13.1). Each size: the cluster is started, the command
 * is run RUNS times in full and with --fast, the cluster is stopped. Root only (it starts daemons).
 *
 *   npm run build && node dist/bench/fleet-slurm.js [SIZES=3,16,64] [RUNS=2]
 */
import { spawnSync } from "node:child_process";
import { loadavg } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { SlurmCluster, slurmSkipReason } from "../test/fleet/slurm-cluster.js";

const MAIN = fileURLToPath(new URL("../src/cli/main.js", import.meta.url));
const sizes = (process.argv[2] ?? "3,16,64").split(",").map(Number);
const runs = Number(process.argv[3] ?? 2);

const skip = slurmSkipReason();
if (skip) {
  console.error(`cannot run: ${skip}`);
  process.exit(2);
}
console.log(`size\tmode\trun\tseconds\tok_nodes\texit\tload1\terror_findings`);
for (const size of sizes) {
  const names = Array.from({ length: size }, (_, i) => `b${String(i + 1).padStart(3, "0")}`);
  const cluster = await SlurmCluster.start(
    names.map((name) => ({ name, env: { PATH: "/usr/bin:/bin:/usr/sbin:/sbin" } })),
    { cpus: 2 },
  );
  try {
    for (const mode of ["full", "fast"]) {
      for (let run = 1; run <= runs; run++) {
        // The previous job's nodes must be idle again, or srun would first wait for them.
        const deadline = Date.now() + 120_000;
        while (Date.now() < deadline) {
          const states = spawnSync("sinfo", ["-h", "-N", "-o", "%T"], { env: cluster.env, encoding: "utf8" })
            .stdout.split("\n")
            .filter(Boolean);
          if (states.length === size && states.every((s) => s === "idle")) break;
          await new Promise((r) => setTimeout(r, 500));
        }
        const args = [
          MAIN,
          "fleet",
          "doctor",
          "--slurm",
          "--node-timeout",
          "600",
          "--json",
          ...(mode === "fast" ? ["--fast"] : []),
        ];
        const started = performance.now();
        const out = spawnSync(process.execPath, args, {
          env: cluster.env,
          encoding: "utf8",
          maxBuffer: 1 << 28,
          cwd: join(cluster.dir),
        });
        const seconds = (performance.now() - started) / 1000;
        let ok = -1;
        let errors = "";
        try {
          type Found = { ruleId: string; severity: string; nodes: string[] };
          const report = JSON.parse(out.stdout) as {
            summary: { ok: number };
            fleetFindings: Found[];
            nodeFindings: Found[];
          };
          ok = report.summary.ok;
          errors = [...report.fleetFindings, ...report.nodeFindings]
            .filter((f) => f.severity === "error")
            .map((f) => `${f.ruleId}:${f.nodes.length}`)
            .join(",");
        } catch {
          process.stderr.write(out.stderr);
        }
        console.log(
          `${size}\t${mode}\t${run}\t${seconds.toFixed(2)}\t${ok}\t${out.status}\t${loadavg()[0]?.toFixed(1)}\t${errors}`,
        );
      }
    }
  } finally {
    await cluster.stop();
  }
}
