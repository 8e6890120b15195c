import { test } from "node:test";
import assert from "node:assert/strict";
import { loadPackagedData } from "../load.js";
import type { CudaToolkitFact, CudaToolkitRow } from "../types.js";
import { DRIVER_FACTS, toolkitSources } from "./toolkit-sources.js";

const data = loadPackagedData();

/** The facts a toolkit row states: each must have a source that says it backs it. */
function statedFacts(row: CudaToolkitRow): CudaToolkitFact[] {
  return [
    "minDriverLinux",
    ...(row.minorCompatMinDriverLinux !== null ? (["minorCompatMinDriverLinux"] as const) : []),
    ...(row.sassTargets ? (["sassTargets"] as const) : []),
    ...(row.ptxIsa ? (["ptxIsa"] as const) : []),
  ];
}

test("every fact of every CUDA toolkit row has a source that states it", () => {
  const unbacked = data.cudaToolkits.flatMap((row) =>
    statedFacts(row)
      .filter((fact) => toolkitSources(row, [fact]).length === 0)
      .map((fact) => `CUDA ${row.version}: ${fact}`),
  );
  assert.ok(data.cudaToolkits.length >= 15);
  assert.deepEqual(unbacked, []);
});

test("CUDA 13.0's driver sources are the release notes and the compatibility page, its target list a measurement", () => {
  const row = data.cudaToolkits.find((r) => r.version === "13.0")!;
  const driver = toolkitSources(row, DRIVER_FACTS);
  assert.ok(driver.length >= 2);
  assert.ok(
    driver.every((url) => url.startsWith("https://docs.nvidia.com/")),
    driver.join(", "),
  );
  const targets = toolkitSources(row, ["sassTargets"]);
  assert.deepEqual(targets, toolkitSources(row, ["ptxIsa"]));
  assert.match(targets[0]!, /docs\/measurements\/2026-11-27-nvcc-13\.0\.md$/);
  assert.ok(!targets.some((url) => driver.includes(url)));
  assert.deepEqual(toolkitSources(null, DRIVER_FACTS), []);
});
