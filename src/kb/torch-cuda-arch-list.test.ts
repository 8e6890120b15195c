/**
 * The torch 1.13 table against the real thing: Debian's python3-torch 1.13.1 runs its own
 * cpp_extension._get_cuda_arch_flags on each value, and the KB must predict which values it rejects.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import {
  acceptedEntry,
  archListTargets,
  cppExtensionArchTable,
  cppExtensionEntries,
  meansVisibleGpus,
} from "./torch-cuda-arch-list.js";

const DEBIAN_PYTHON = "/usr/bin/python3";
const VALUES = [
  "9.0",
  "8.6",
  "8.0,9.0",
  "8.0  8.6",
  "8.0;",
  "Ampere",
  "Hopper",
  "sm_80",
  "7.5+PTX",
  "8.6+ptx",
  "native",
  "Turing 8.0",
];

const SCRIPT = `
import json, os, sys
import torch.utils.cpp_extension as c
out = {}
for value in json.loads(sys.argv[1]):
    os.environ["TORCH_CUDA_ARCH_LIST"] = value
    try:
        c._get_cuda_arch_flags()
        out[value] = None
    except ValueError as e:
        out[value] = str(e)
print(json.dumps(out))
`;

function predictedRejects(value: string, torchVersion: string): boolean {
  const table = cppExtensionArchTable(torchVersion);
  assert.ok(table, `a table for ${torchVersion}`);
  if (meansVisibleGpus(value, table)) return false;
  return cppExtensionEntries(value, table).some((entry) => !acceptedEntry(entry, table));
}

test("torch 1.13's own cpp_extension rejects exactly the values the KB table predicts", () => {
  const run = spawnSync(DEBIAN_PYTHON, ["-c", SCRIPT, JSON.stringify(VALUES)], { encoding: "utf8" });
  assert.equal(run.status, 0, run.stderr);
  const version = spawnSync(DEBIAN_PYTHON, ["-c", "import torch; print(torch.__version__)"], {
    encoding: "utf8",
  }).stdout.trim();
  const errors = JSON.parse(run.stdout) as Record<string, string | null>;
  const rejected = VALUES.filter((v) => errors[v] !== null);
  assert.ok(rejected.length >= 5 && rejected.length < VALUES.length, `a mix: ${rejected.join(" | ")}`);
  for (const value of VALUES)
    assert.equal(
      predictedRejects(value, version),
      errors[value] !== null,
      `${JSON.stringify(value)}: torch ${version} says ${errors[value] ?? "ok"}`,
    );
});

test("archListTargets reads entries leniently and expands names into SASS and PTX targets", () => {
  const newest = cppExtensionArchTable("2.11.0+cu130");
  assert.deepEqual(archListTargets("8.0,9.0a+PTX 12.0f", newest), [
    "sm_80",
    "sm_90a",
    "compute_90a",
    "sm_120f",
  ]);
  assert.deepEqual(archListTargets("Ampere", newest), ["sm_80", "sm_86", "compute_86"]);
  assert.deepEqual(archListTargets("sm_90 garbage", newest), []);
});

test("torch 2.9 and later reject Thor's old 10.1; versions with no table read are judged by form only", () => {
  const newest = cppExtensionArchTable("2.9.0");
  assert.equal(acceptedEntry("10.1", newest), false);
  assert.equal(acceptedEntry("11.0+PTX", newest), true);
  assert.equal(cppExtensionArchTable("2.5.1"), null);
  assert.equal(acceptedEntry("10.1", null), true);
  assert.equal(acceptedEntry("12.0f", null), false);
});
