/**
 * Real wheels around the nvcc-built libraries of test/fixtures/wheels (build.sh), zipped by
 * Python's zipfile (test/fixtures/wheels/make-wheel.py) as bdist_wheel does.
 */
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";

export const WHEEL_FIXTURES = fileURLToPath(new URL("../../../test/fixtures/wheels", import.meta.url));

export interface WheelSpec {
  name: string;
  version: string;
  tag: string;
  /** member -> a library of test/fixtures/wheels */
  libs: Record<string, string>;
  /** Incompressible bytes beside the libraries (a package's data, model weights). */
  filler?: number;
  variant?: { label: string; json: unknown };
}

/** Writes the wheel into `dir`; returns its path. */
export function makeWheel(dir: string, spec: WheelSpec): string {
  const result = spawnSync("python3", [`${WHEEL_FIXTURES}/make-wheel.py`, dir, JSON.stringify(spec)], {
    encoding: "utf8",
  });
  if (result.status !== 0) throw new Error(`make-wheel.py: ${result.stderr}`);
  return result.stdout.trim();
}

/** The four single-purpose packages of the issue: sm_90 only, compute_80 PTX only, sm_100a only, sm_120 + PTX. */
export const ARCH_PACKAGES: WheelSpec[] = [
  {
    name: "only_sm90",
    version: "1.0",
    tag: "cp312-cp312-manylinux_2_28_x86_64",
    libs: { "only_sm90/libsm90.so": "libsm90.so" },
  },
  {
    name: "only_ptx80",
    version: "1.0",
    tag: "cp312-cp312-manylinux_2_28_x86_64",
    libs: { "only_ptx80/libptx80.so": "libptx80.so" },
  },
  {
    name: "only_sm100a",
    version: "1.0",
    tag: "cp312-cp312-manylinux_2_28_x86_64",
    libs: { "only_sm100a/libsm100a.so": "libsm100a.so" },
  },
  {
    name: "sm120_ptx",
    version: "1.0",
    tag: "cp312-cp312-manylinux_2_28_x86_64",
    libs: { "sm120_ptx/libsm120ptx.so": "libsm120ptx.so" },
  },
];

/** One wheel holding all four libraries and 2 MB of data: what a real CUDA package looks like. */
export const MIXED_PACKAGE: WheelSpec = {
  name: "mixedcuda",
  version: "2.0",
  tag: "cp312-cp312-manylinux_2_28_x86_64",
  libs: {
    "mixedcuda/lib/libsm90.so": "libsm90.so",
    "mixedcuda/lib/libptx80.so": "libptx80.so",
    "mixedcuda/lib/libsm100a.so": "libsm100a.so",
    "mixedcuda/lib/libsm120ptx.so": "libsm120ptx.so",
  },
  filler: 2_000_000,
};
