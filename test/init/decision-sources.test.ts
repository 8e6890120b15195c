/**
 * A decision of `gpuprep init` cites the sources of the facts it rests on (issue 29 item 4): the
 * torch and driver decisions rest on a CUDA toolkit's driver floor, so they cite the release
 * notes' driver tables and not what backs nvcc's target list (an nvcc run, a third-party pull
 * request quoting it); the nvcc decision for source builds rests on that target list. Real
 * projects planned on the packaged knowledge base for several targets and both strategies.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DRIVER_FACTS, loadKnowledgeBase } from "../../src/kb/index.js";
import { readProject } from "../../src/gather/project.js";
import { makePlan } from "../../src/plan/index.js";
import { targetFromName } from "../../src/plan/target.js";
import type { Plan } from "../../src/plan/types.js";
import { initOptions } from "../support/init-options.js";

const kb = loadKnowledgeBase();

/** URLs that back only a toolkit's targets or PTX ISA, and no other table's row. */
function targetOnlySources(): Set<string> {
  const elsewhere = new Set(
    Object.entries(kb.data)
      .filter(([table]) => table !== "cudaToolkits")
      .flatMap(([, rows]) => (rows as { sources: { url: string }[] }[]).flatMap((row) => row.sources))
      .map((source) => source.url),
  );
  const driver = new Set(
    kb.data.cudaToolkits.flatMap((row) =>
      row.sources.filter((s) => s.backs.some((fact) => DRIVER_FACTS.includes(fact))).map((s) => s.url),
    ),
  );
  return new Set(
    kb.data.cudaToolkits
      .flatMap((row) => row.sources.map((s) => s.url))
      .filter((url) => !driver.has(url) && !elsewhere.has(url)),
  );
}

function plan(
  gpu: string,
  driver: string | null,
  strategy: "native" | "container",
  requirements: string,
): Plan {
  const dir = mkdtempSync(join(tmpdir(), "gpuprep-decision-sources-"));
  writeFileSync(join(dir, "requirements.txt"), requirements);
  const target = targetFromName(kb, { gpu, driver, cpuArch: null, flag: "--target" });
  return makePlan(kb, readProject(dir), target, initOptions({ strategy }));
}

const CASES = [
  { gpu: "rtx-5070-ti", driver: null, strategy: "native" },
  { gpu: "h100", driver: "580.159.04", strategy: "native" },
  { gpu: "dgx-spark", driver: "580", strategy: "native" },
  { gpu: "h100", driver: null, strategy: "container" },
  { gpu: "rtx-5090", driver: "575.51.03", strategy: "container" },
] as const;

test("torch and driver decisions cite driver tables, never the sources of nvcc's target list", () => {
  const targetOnly = targetOnlySources();
  assert.ok(targetOnly.size >= 3, `target-list sources found: ${[...targetOnly].join(", ")}`);
  let checked = 0;
  for (const { gpu, driver, strategy } of CASES) {
    const decisions = plan(gpu, driver, strategy, "torch\nflash-attn\n").decisions;
    for (const decision of decisions.filter((d) => d.topic === "torch" || d.topic === "driver")) {
      checked++;
      const stray = decision.sources.filter((url) => targetOnly.has(url));
      assert.deepEqual(
        stray,
        [],
        `${gpu} ${strategy}: the ${decision.topic} decision cites ${stray.join(", ")}`,
      );
    }
  }
  assert.ok(checked >= CASES.length, `only ${checked} torch/driver decisions were checked`);
});

test("the nvcc decision for a source build cites the target list it rests on", () => {
  const targetOnly = targetOnlySources();
  const decisions = plan("dgx-spark", "580", "native", "torch\nflash-attn\n").decisions;
  const nvcc = decisions.find((d) => d.topic === "nvcc for source builds");
  assert.ok(nvcc, `no nvcc decision among ${decisions.map((d) => d.topic).join(", ")}`);
  assert.ok(
    nvcc.sources.some((url) => targetOnly.has(url)),
    `the nvcc decision cites ${nvcc.sources.join(", ")}`,
  );
});
