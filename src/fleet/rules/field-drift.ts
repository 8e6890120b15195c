/**
 * Drift of one fingerprint field: the nodes whose value is not the reference's (the --baseline's
 * where it names the field, else the majority's), each shown as its change from the reference.
 */
import { FINGERPRINT_LABELS } from "../fingerprint.js";
import {
  describeDifference,
  fleetFinding,
  nodeListText,
  ofTotal,
  shortValue,
  spread,
  spreadEvidence,
  type FleetView,
  type FleetWideRule,
} from "../rule-kit.js";
import type { Expectation } from "../reference.js";
import type { Severity } from "../../findings/types.js";
import type { FingerprintField, MergedFinding } from "../types.js";

/** The field's values, the expectation, and the nodes whose value it does not accept. */
export function fieldDrift(view: FleetView, field: FingerprintField) {
  const values = spread(view.nodes, field);
  const expected = view.reference.expected(field, values);
  if (!expected) return null;
  const off = values.filter(([value]) => !expected.accepts(value));
  if (off.length === 0) return null;
  return { values, expected, off, drifted: off.flatMap(([, nodes]) => nodes) };
}

/** "the 14 with X" or "the baseline's X". */
export function referencePhrase(expected: Expectation, values: Array<[string, string[]]>): string {
  if (expected.fromBaseline) return `the baseline's ${shortValue(expected.text)}`;
  return `the ${values[0]?.[1].length ?? 0} with ${shortValue(expected.text)}`;
}

function driftMessage(
  view: FleetView,
  field: FingerprintField,
  drift: NonNullable<ReturnType<typeof fieldDrift>>,
  why: string,
): string {
  const changes = drift.off
    .map(([value, nodes]) => `${describeDifference(drift.expected.text, value)} on ${nodeListText(nodes, 4)}`)
    .join("; ");
  return `${ofTotal(drift.drifted.length, view.nodes.length)} differ in ${FINGERPRINT_LABELS[field]} from ${referencePhrase(drift.expected, drift.values)}: ${changes}. ${why}`;
}

/** A rule that fires when one field differs. */
function differs(
  id: string,
  title: string,
  severity: Severity,
  field: FingerprintField,
  why: string,
  fix: string,
): FleetWideRule {
  return {
    scope: "fleet",
    id,
    title,
    severity,
    check(view): MergedFinding[] {
      const drift = fieldDrift(view, field);
      if (!drift) return [];
      return [
        fleetFinding(this, {
          message: driftMessage(view, field, drift, why),
          evidence: spreadEvidence(field, drift.values, drift.expected.text),
          fix,
          nodes: drift.drifted,
        }),
      ];
    },
  };
}

export const cudaDriverDrift = differs(
  "fleet-cuda-driver-drift",
  "The driver's CUDA version differs between nodes",
  "info",
  "driverCuda",
  "The newest CUDA each driver runs differs; PTX built for the newer one cannot be JIT-compiled on the older.",
  "Keep one driver branch across the fleet.",
);

export const ncclDrift = differs(
  "fleet-nccl-drift",
  "NCCL differs between nodes",
  "warning",
  "nccl",
  "Ranks with different NCCL versions can hang or fail in collectives.",
  "Run one torch build (it bundles NCCL) everywhere, and the same NCCL if you override it with LD_LIBRARY_PATH or NCCL_* settings.",
);

export const pythonDrift = differs(
  "fleet-python-drift",
  "Python differs between nodes",
  "warning",
  "python",
  "Different interpreters (a different PATH, venv or module) mean different packages.",
  "Point every node at the same interpreter: activate the same venv in the job script, or pass --python with its path.",
);

export const numpyDrift = differs(
  "fleet-numpy-drift",
  "numpy differs between nodes",
  "warning",
  "numpy",
  "Extensions built against one numpy ABI fail to import under another.",
  "Install the same numpy on every node.",
);

export const extensionDrift = differs(
  "fleet-extension-drift",
  "Extensions differ between nodes",
  "warning",
  "extensions",
  "Nodes import different builds of the import-checked extensions (or fail to import them).",
  "Install the same extension builds everywhere (one image or shared venv).",
);

export const binaryCoverageDrift = differs(
  "fleet-binary-coverage-drift",
  "Extension binaries cover different GPU targets between nodes",
  "warning",
  "binaryCoverage",
  "A kernel present on one node's build may be missing on another's.",
  "Build the extensions once for every compute capability in the fleet (TORCH_CUDA_ARCH_LIST) and install that build everywhere.",
);

export const cpuArchMix = differs(
  "fleet-cpu-arch-mix",
  "CPU architectures differ between nodes",
  "warning",
  "cpuArch",
  "One environment cannot serve both: wheels are per CPU architecture.",
  "Keep one environment (or image) per CPU architecture, and a partition per architecture.",
);
