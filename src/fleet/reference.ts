/**
 * The reference drift is measured from: a --baseline where one is given (a field it names is
 * judged against it, on every node, even when all nodes agree), else the majority (the most common
 * value of each field). The report names which one it was, so a wrong majority (the caller's PATH
 * carried into every job) is not mistaken for "the fleet is fine".
 */
import type { Baseline } from "./baseline.js";
import { parseDriverVersion } from "../vocabulary/driver-version.js";
import { NOT_INSTALLED_PACKAGE } from "./packages.js";
import type { FingerprintField, NodeGroup, ReferenceSummary } from "./types.js";

/** What a node's value of one field should be. */
export interface Expectation {
  /** The expected value in words: "2.11.0+cu130", "driver branch 580". */
  text: string;
  accepts(value: string): boolean;
  /** From the --baseline file (else the majority). */
  fromBaseline: boolean;
}

export interface Reference {
  summary: ReferenceSummary;
  /** The expectation for a fingerprint field, given the nodes' values (most common first). */
  expected(field: FingerprintField, values: Array<[string, string[]]>): Expectation | null;
  /** A package's expected version, when the baseline says (NOT_INSTALLED_PACKAGE: must be absent). */
  expectedPackage(name: string): string | undefined;
}

function majorityOf(values: Array<[string, string[]]>): Expectation | null {
  const top = values[0]?.[0];
  if (top === undefined) return null;
  return { text: top, accepts: (v) => v === top, fromBaseline: false };
}

function exact(text: string): Expectation {
  return { text, accepts: (v) => v === text, fromBaseline: true };
}

/**
 * What a node could not tell, so a snapshot baseline cannot hold it against it: binaries not
 * scanned on a node (fleet runs never scan them there), an arch list unknown without torch's
 * import (--fast), GPU health not read.
 */
function unknownOnNode(value: string): boolean {
  return value === "not scanned" || value.startsWith("unknown (") || value.startsWith("not read");
}

function snapshotField(text: string): Expectation {
  return { text, accepts: (v) => v === text || unknownOnNode(v) || unknownOnNode(text), fromBaseline: true };
}

/** "8x NVIDIA H100 80GB HBM3 (9.0)" -> [{count: 8, name: "NVIDIA H100 80GB HBM3"}]. */
function gpuItems(value: string): Array<{ count: number; name: string }> {
  return value.split(", ").flatMap((item) => {
    const match = /^(\d+)x (.+?)(?: \(\d+\.\d+\))?( MIG)?$/.exec(item);
    return match ? [{ count: Number(match[1]), name: match[2] ?? "" }] : [];
  });
}

/** A full driver ("580.95.05") is expected exactly; a branch ("580") accepts each driver of that branch. */
function driverExpectation(expected: string): Expectation {
  if (expected.includes(".")) return exact(expected);
  // The baseline's branch and each node's driver (the fingerprint's text) enter here.
  const branch = parseDriverVersion(expected)?.branch;
  return {
    text: `driver branch ${expected}`,
    accepts: (v) => branch !== undefined && parseDriverVersion(v)?.branch === branch,
    fromBaseline: true,
  };
}

/** The expectation an expected-values baseline sets for a field, or null where it says nothing. */
function fromExpectedValues(baseline: Baseline, field: FingerprintField): Expectation | null {
  const e = baseline.expected;
  switch (field) {
    case "torch":
      return e.torch === undefined ? null : exact(e.torch);
    case "torchCuda":
      return e.torchCuda === undefined ? null : exact(e.torchCuda);
    case "driver":
      return e.driver === undefined ? null : driverExpectation(e.driver);
    case "gpus": {
      const { gpu, gpuCount } = e;
      if (gpu === undefined && gpuCount === undefined) return null;
      const text = `${gpuCount ?? "any number of"}x ${gpu ?? "GPUs"}`;
      return {
        text,
        accepts: (v) => {
          const items = gpuItems(v);
          const total = items.reduce((sum, i) => sum + i.count, 0);
          if (gpuCount !== undefined && total !== gpuCount) return false;
          return gpu === undefined || (items.length === 1 && items[0]?.name === gpu);
        },
        fromBaseline: true,
      };
    }
    case "python": {
      const { python, pythonPath } = e;
      if (python === undefined && pythonPath === undefined) return null;
      return {
        text: [python ? `Python ${python}` : null, pythonPath].filter(Boolean).join(" at "),
        accepts: (v) => {
          const [version = "", path = ""] = v.split(" ");
          const versionOk = python === undefined || version === python || version.startsWith(`${python}.`);
          return versionOk && (pythonPath === undefined || path === pythonPath);
        },
        fromBaseline: true,
      };
    }
    case "numpy": {
      const numpy = baseline.packages.get("numpy");
      return numpy === undefined ? null : exact(numpy === NOT_INSTALLED_PACKAGE ? "not installed" : numpy);
    }
    default:
      return null;
  }
}

export function majorityReference(groups: readonly NodeGroup[], checked: number): Reference {
  const top = groups[0];
  return {
    summary: {
      kind: "majority",
      source: null,
      description: top
        ? `the majority: group ${top.id} (${top.nodes.length} of ${checked} checked node${checked === 1 ? "" : "s"}) is taken as right; pass --baseline FILE to judge against a known-good node instead`
        : "no node answered",
    },
    expected: (_field, values) => majorityOf(values),
    expectedPackage: () => undefined,
  };
}

export function baselineReference(baseline: Baseline): Reference {
  const named = [
    ...Object.keys(baseline.expected),
    ...(baseline.packages.size ? [`${baseline.packages.size} package versions`] : []),
  ];
  return {
    summary: {
      kind: "baseline",
      source: baseline.source,
      description:
        baseline.kind === "snapshot"
          ? `the baseline snapshot ${baseline.source}${baseline.node ? ` (node ${baseline.node})` : ""}: every field and package of it`
          : `the baseline ${baseline.source} (${named.join(", ")}); other fields against the majority`,
    },
    expected(field, values) {
      if (baseline.fingerprint) return snapshotField(baseline.fingerprint[field]);
      return fromExpectedValues(baseline, field) ?? majorityOf(values);
    },
    expectedPackage(name) {
      const version = baseline.packages.get(name);
      if (version !== undefined) return version;
      return baseline.packagesComplete ? NOT_INSTALLED_PACKAGE : undefined;
    },
  };
}
