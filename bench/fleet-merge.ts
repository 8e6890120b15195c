/**
 * Merge benchmark (issues 14 and 26): node snapshots derived from real captures, merged by
 * `gpuprep fleet doctor --from DIR --json`. Each measured run is a fresh Node process; it reports
 * its wall time per phase and its peak RSS (process.resourceUsage().maxRSS).
 *
 *   npm run build && node dist/bench/fleet-merge.js [NODES=1000] [RUNS=5] [--names-only]
 *
 * The snapshots: test/fixtures/facts/h100-healthy.json for most nodes, with these fields changed
 * (test/fleet/derive.ts): every node's target.ref/host.hostname (its name); every 20th node
 * host.nvidia.driverVersion/cudaVersion = 550.54.15/12.4; every 33rd python.torch and torchLive
 * version/CUDA = 2.10.0+cu128/12.8; every 50th python.env.CUDA_VISIBLE_DEVICES = ""; every 97th
 * the GPU name/compute capability = NVIDIA GeForce RTX 5090/12.0. Every 10th node is
 * h200x2-healthy.json instead (2 GPUs), renamed the same way. Every node carries the passive GPU
 * health the probe reads from the H200 capture (test/fleet/scenarios.ts probedHealth). Unless
 * --names-only, every node then varies as real nodes do (derive.ts realisticVariation, seeded
 * per node): GPU UUIDs, durations, free memory, capturedAt, the driver module's build date, the
 * corrected ECC counters and whether the GPU idles.
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));

async function writeSnapshots(count: number, realistic: boolean): Promise<string> {
  const { readFactsFile } = await import("../src/facts/io.js");
  const { driver, gpu, nodeFrom, torch, visibleDevices, realisticVariation, seeded } =
    await import("../test/fleet/derive.js");
  const { health } = await import("../test/fleet/scenarios.js");
  const h100 = readFactsFile(join(ROOT, "test/fixtures/facts/h100-healthy.json"));
  const h200 = readFactsFile(join(ROOT, "test/fixtures/facts/h200x2-healthy.json"));
  const dir = mkdtempSync(join(tmpdir(), "gpuprep-fleet-bench-"));
  for (let i = 1; i <= count; i++) {
    const name = `node${String(i).padStart(4, "0")}`;
    const changes = [health("healthy")];
    if (realistic) changes.push(realisticVariation(seeded(i)));
    if (i % 20 === 0) changes.push(driver("550.54.15", "12.4"));
    if (i % 33 === 0) changes.push(torch("2.10.0+cu128", "12.8"));
    if (i % 50 === 0) changes.push(visibleDevices(""));
    if (i % 97 === 0) changes.push(gpu("NVIDIA GeForce RTX 5090", "12.0"));
    const node = nodeFrom(i % 10 === 0 ? h200 : h100, name, ...changes);
    writeFileSync(join(dir, `${name}.json`), JSON.stringify(node.facts));
  }
  return dir;
}

/** One measured run, in this (fresh) process: read + parse, merge, render JSON. */
async function measure(dir: string): Promise<void> {
  const t0 = performance.now();
  const cpu0 = process.cpuUsage();
  const { readSnapshots } = await import("../src/fleet/snapshots.js");
  const { mergeFleet } = await import("../src/fleet/merge.js");
  const { loadKnowledgeBase } = await import("../src/kb/index.js");
  const { renderJsonDocument } = await import("../src/report/envelope.js");
  const kb = loadKnowledgeBase();
  const t1 = performance.now();
  const results = readSnapshots([dir]);
  const t2 = performance.now();
  const report = mergeFleet(results, kb, { transport: "snapshots", mode: "doctor" });
  const t3 = performance.now();
  const json = renderJsonDocument("gpuprep.fleet", 1, report);
  const t4 = performance.now();
  process.stdout.write(
    JSON.stringify({
      loadModulesMs: t1 - t0,
      readMs: t2 - t1,
      mergeMs: t3 - t2,
      renderMs: t4 - t3,
      totalMs: t4 - t0,
      // User+system CPU: on a shared machine (load >> cores) the wall time mostly waits for a core.
      cpuMs: (process.cpuUsage(cpu0).user + process.cpuUsage(cpu0).system) / 1000,
      maxRssMB: process.resourceUsage().maxRSS / 1024,
      nodes: report.summary.nodes,
      groups: report.summary.groups,
      fleetFindings: report.fleetFindings.map((f) => `${f.ruleId}:${f.nodes.length}`),
      jsonBytes: json.length,
    }) + "\n",
  );
}

function median(values: number[]): number {
  const s = [...values].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)] ?? NaN;
}

async function main(): Promise<void> {
  if (process.argv[2] === "--measure") return measure(process.argv[3] as string);
  const positional = process.argv.slice(2).filter((a) => !a.startsWith("--"));
  const count = Number(positional[0] ?? 1000);
  const runs = Number(positional[1] ?? 5);
  const realistic = !process.argv.includes("--names-only");
  const dir = await writeSnapshots(count, realistic);
  const self = fileURLToPath(import.meta.url);
  const rows: Array<Record<string, number>> = [];
  let last: Record<string, unknown> = {};
  for (let i = 0; i < runs; i++) {
    const started = performance.now();
    const cli = spawnSync(
      process.execPath,
      [join(ROOT, "dist/src/cli/main.js"), "fleet", "doctor", "--from", dir, "--json"],
      { maxBuffer: 1 << 30 },
    );
    const cliMs = performance.now() - started;
    const run = spawnSync(process.execPath, [self, "--measure", dir], { encoding: "utf8" });
    last = JSON.parse(run.stdout) as Record<string, unknown>;
    rows.push({ cliMs, cliExit: cli.status ?? -1, ...(last as Record<string, number>) });
  }
  const keys = ["cliMs", "totalMs", "cpuMs", "readMs", "mergeMs", "renderMs", "maxRssMB"];
  console.log(
    `${count} ${realistic ? "realistic" : "names-only"} snapshots in ${dir}, ${runs} runs (median, min, max); load average ${(
      await import("node:os")
    )
      .loadavg()
      .map((l) => l.toFixed(1))
      .join(" ")}:`,
  );
  for (const key of keys) {
    const values = rows.map((r) => Number(r[key]));
    console.log(
      `${key.padEnd(10)} ${median(values).toFixed(0).padStart(7)} ${Math.min(...values)
        .toFixed(0)
        .padStart(7)} ${Math.max(...values)
        .toFixed(0)
        .padStart(7)}`,
    );
  }
  console.log(
    `cli exit ${rows[0]?.["cliExit"]}, groups ${String(last["groups"])}, fleet findings ${JSON.stringify(last["fleetFindings"])}`,
  );
}

await main();
