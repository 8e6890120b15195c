/**
 * Drift rules: facts that differ between nodes and break a job that runs on all of them. Each
 * rule has a stable id, a severity, evidence naming the nodes and their values, and a fix; where
 * the knowledge base can judge a combination (a driver against torch's CUDA, a GPU against an
 * arch list) the finding says whether it fails, not only that it differs.
 */
import type { Facts } from "../facts/schema.js";
import type { KnowledgeBase } from "../kb/index.js";
import { coverageFor, parseComputeCapability } from "../kb/compat.js";
import { docsUrl } from "../docs-url.js";
import { makeFinding } from "../rule-helpers/finding.js";
import type { Evidence, Severity } from "../rule-helpers/types.js";
import { FINGERPRINT_LABELS, NOT_INSTALLED } from "./fingerprint.js";
import type { Fingerprint, FingerprintField, MergedFinding } from "./types.js";

export interface OkNode {
  node: string;
  facts: Facts;
  fingerprint: Fingerprint;
  /** Kubernetes node labels, when the node came from --kube. */
  labels?: Record<string, string>;
}

export interface DriftRule {
  id: string;
  title: string;
  severity: Severity;
  check(nodes: OkNode[], kb: KnowledgeBase): MergedFinding[];
}

export const FLEET_DOCS = docsUrl("docs/fleet.md");

/** "n1, n2, n3 and 13 more". */
export function nodeListText(nodes: string[], max = 6): string {
  if (nodes.length <= max) return nodes.join(", ");
  return `${nodes.slice(0, max).join(", ")} and ${nodes.length - max} more`;
}

/** value -> nodes, most common value first (ties: by value). */
export function spread(nodes: OkNode[], field: FingerprintField): Array<[string, string[]]> {
  const map = new Map<string, string[]>();
  for (const n of nodes) {
    const value = n.fingerprint[field];
    const list = map.get(value);
    if (list) list.push(n.node);
    else map.set(value, [n.node]);
  }
  return [...map].sort((a, b) => b[1].length - a[1].length || a[0].localeCompare(b[0]));
}

function spreadEvidence(field: FingerprintField, values: Array<[string, string[]]>): Evidence[] {
  return values.map(([value, nodes], index) => ({
    label: `${FINGERPRINT_LABELS[field]} ${index === 0 ? shortValue(value) : describeDifference(values[0]?.[0] ?? "", value, 160)}`,
    value: `${nodes.length} node${nodes.length === 1 ? "" : "s"}: ${nodeListText(nodes, 12)}`,
  }));
}

function finding(
  rule: Pick<DriftRule, "id" | "title" | "severity">,
  parts: {
    message: string;
    evidence: Evidence[];
    fix: string;
    commands?: string[];
    nodes: string[];
    severity?: Severity;
  },
): MergedFinding {
  const { fix, commands, nodes, ...rest } = parts;
  return {
    ...makeFinding(rule, { ...rest, fix: { summary: fix, commands: commands ?? [] } }),
    // Drift rules are documented on the fleet page, not on a page per rule.
    docs: `${FLEET_DOCS}#${rule.id}`,
    nodes,
  };
}

/**
 * How a value differs from the reference, item by item for list-like fields ("torch: sm_80 sm_90;
 * xformers: sm_80" -> "+xformers: sm_80"), so a long fingerprint field reads as its change.
 */
export function describeDifference(reference: string, value: string, max = 240): string {
  for (const separator of ["; ", ", "]) {
    if (!reference.includes(separator) && !value.includes(separator)) continue;
    const mine = new Set(value.split(separator));
    const theirs = new Set(reference.split(separator));
    const added = [...mine].filter((x) => !theirs.has(x)).map((x) => `+${x}`);
    const removed = [...theirs].filter((x) => !mine.has(x)).map((x) => `-${x}`);
    const text = [...added, ...removed].join(separator);
    return text.length > max ? `${text.slice(0, max)}…` : text;
  }
  return value.length > max ? `${value.slice(0, max)}…` : value;
}

function shortValue(value: string, max = 120): string {
  return value.length > max ? `${value.slice(0, max)}…` : value;
}

/** The nodes outside the most common value (the ones that drifted), for a field with 2+ values. */
function minorityNodes(values: Array<[string, string[]]>): string[] {
  return values.slice(1).flatMap(([, nodes]) => nodes);
}

function ofTotal(part: number, total: number): string {
  return `${part} of ${total} node${total === 1 ? "" : "s"}`;
}

/** A simple "differs" rule for one fingerprint field. */
function differs(
  id: string,
  title: string,
  severity: Severity,
  field: FingerprintField,
  why: string,
  fix: string,
): DriftRule {
  return {
    id,
    title,
    severity,
    check(nodes) {
      const values = spread(nodes, field);
      if (values.length < 2) return [];
      const [majority] = values;
      const drifted = minorityNodes(values);
      return [
        finding(this, {
          message:
            `${ofTotal(drifted.length, nodes.length)} differ in ${FINGERPRINT_LABELS[field]} from the ${majority?.[1].length ?? 0} ` +
            `with ${shortValue(majority?.[0] ?? "?")}: ${values
              .slice(1)
              .map(([v, ns]) => `${describeDifference(majority?.[0] ?? "", v)} on ${nodeListText(ns, 4)}`)
              .join("; ")}. ${why}`,
          evidence: spreadEvidence(field, values),
          fix,
          nodes: drifted,
        }),
      ];
    },
  };
}

/** torch version/build: the classic "works on node 3" (nodes import different code). */
const torchDrift: DriftRule = {
  id: "fleet-torch-drift",
  title: "torch differs between nodes",
  severity: "error",
  check(nodes) {
    const values = spread(nodes, "torch");
    const missing = values.find(([v]) => v === NOT_INSTALLED)?.[1] ?? [];
    const cuda = spread(nodes, "torchCuda").filter(([v]) => v !== "-");
    if (values.length < 2 && cuda.length < 2) return [];
    const parts: string[] = [];
    if (missing.length)
      parts.push(
        `torch is not installed on ${ofTotal(missing.length, nodes.length)} (${nodeListText(missing)})`,
      );
    const installed = values.filter(([v]) => v !== NOT_INSTALLED);
    if (installed.length > 1)
      parts.push(
        `torch versions differ: ${installed.map(([v, ns]) => `${v} on ${nodeListText(ns, 4)}`).join("; ")}`,
      );
    if (cuda.length > 1)
      parts.push(
        `torch's CUDA differs: ${cuda.map(([v, ns]) => `${v} on ${nodeListText(ns, 4)}`).join("; ")}`,
      );
    return [
      finding(this, {
        message: `${parts.join(". ")}. A job spread over these nodes imports different code on each, or fails to import torch at all.`,
        evidence: [
          ...spreadEvidence("torch", values),
          ...(cuda.length > 1 ? spreadEvidence("torchCuda", cuda) : []),
        ],
        fix: "Install the same torch build on every node (one shared venv or container image); check with `python -c 'import torch; print(torch.__version__)'` through srun on all nodes.",
        nodes: [...new Set([...minorityNodes(values), ...minorityNodes(cuda)])],
      }),
    ];
  },
};

/** Drivers differ; judged against every torch CUDA in the fleet with the KB's driver floors. */
const driverDrift: DriftRule = {
  id: "fleet-driver-drift",
  title: "NVIDIA driver differs between nodes",
  severity: "warning",
  check(nodes, kb) {
    const values = spread(nodes, "driver");
    if (values.length < 2) return [];
    const torchBuilds = new Map<string, { cuda: string; nodes: string[] }>();
    for (const n of nodes) {
      const torch = n.facts.python.torch;
      if (!torch?.cudaVersion) continue;
      const entry = torchBuilds.get(torch.version) ?? { cuda: torch.cudaVersion, nodes: [] };
      entry.nodes.push(n.node);
      torchBuilds.set(torch.version, entry);
    }
    const failures: string[] = [];
    const failing = new Set<string>();
    const evidence = spreadEvidence("driver", values);
    for (const [driver, driverNodes] of values) {
      if (driver === "none") continue;
      for (const [version, build] of torchBuilds) {
        const judged = safe(() => kb.driverSupportFor(driver, build.cuda));
        if (!judged || judged.support === "native") continue;
        const verb =
          judged.support === "unsupported" ? "fails" : "runs only under minor-version compatibility";
        failures.push(
          `${ofTotal(driverNodes.length, nodes.length)} have driver ${driver}; torch ${version} (CUDA ${build.cuda}, on ${nodeListText(build.nodes, 3)}) ${verb} there`,
        );
        evidence.push({
          label: `CUDA ${judged.toolkit.version} driver floor`,
          value: `${judged.toolkit.minDriverLinux}${judged.toolkit.minorCompatMinDriverLinux ? ` (minor-version compatibility from ${judged.toolkit.minorCompatMinDriverLinux})` : ""}`,
        });
        if (judged.support === "unsupported") driverNodes.forEach((d) => failing.add(d));
      }
    }
    const drifted = minorityNodes(values);
    return [
      finding(this, {
        severity: failing.size > 0 ? "error" : "warning",
        message:
          failures.length > 0
            ? `${failures.join(". ")}.`
            : `${ofTotal(drifted.length, nodes.length)} run a different driver than the ${values[0]?.[1].length ?? 0} with ${values[0]?.[0] ?? "?"}: ` +
              `${values
                .slice(1)
                .map(([v, ns]) => `${v} on ${nodeListText(ns, 4)}`)
                .join(
                  "; ",
                )}. Every torch build here still runs on each (by the knowledge base's driver floors).`,
        evidence: dedupeEvidence(evidence),
        fix: "Bring every node to the same driver branch (the newest one the fleet's torch builds need); drain the older nodes until then.",
        nodes: failing.size > 0 ? [...failing] : drifted,
      }),
    ];
  },
};

/** Mixed GPUs: fine only if every torch arch list in the fleet covers every GPU in it. */
const gpuMix: DriftRule = {
  id: "fleet-gpu-mix",
  title: "GPU models differ between nodes",
  severity: "info",
  check(nodes) {
    const values = spread(nodes, "gpus");
    if (values.length < 2) return [];
    const capabilities = new Map<string, string[]>();
    for (const n of nodes) {
      const ccs = new Set<string>();
      for (const gpu of n.facts.host.nvidia.gpus) if (gpu.computeCapability) ccs.add(gpu.computeCapability);
      const live = n.facts.python.torchLive.status === "ok" ? n.facts.python.torchLive.result : null;
      for (const d of live?.devices ?? []) ccs.add(`${d.capability[0]}.${d.capability[1]}`);
      for (const cc of ccs) capabilities.set(cc, [...(capabilities.get(cc) ?? []), n.node]);
    }
    const uncovered: string[] = [];
    const affected = new Set<string>();
    for (const [archList, listNodes] of spread(nodes, "torchArchList")) {
      const targets = archList.split(" ").filter((t) => /^(sm|compute)_\d+/.test(t));
      if (targets.length === 0) continue;
      for (const [ccText, gpuNodes] of capabilities) {
        const cc = parseComputeCapability(ccText);
        if (!cc || coverageFor(targets, cc).how !== "none") continue;
        uncovered.push(
          `the torch arch list of ${nodeListText(listNodes, 3)} (${archList}) has no kernels for compute capability ${ccText} (${nodeListText(gpuNodes, 3)})`,
        );
        gpuNodes.forEach((g) => affected.add(g));
      }
    }
    return [
      finding(this, {
        severity: uncovered.length > 0 ? "error" : "info",
        message:
          `The fleet mixes GPUs: ${values.map(([v, ns]) => `${v} on ${nodeListText(ns, 3)}`).join("; ")}. ` +
          (uncovered.length > 0
            ? `An environment moved between nodes fails with "no kernel image is available": ${uncovered.join("; ")}.`
            : "Every torch arch list here covers every GPU's compute capability."),
        evidence: spreadEvidence("gpus", values),
        fix:
          uncovered.length > 0
            ? "Use a torch build whose arch list covers every compute capability in the fleet, or keep separate partitions/images per GPU generation."
            : "No action needed; keep the arch list covering every GPU when torch is upgraded.",
        nodes: uncovered.length > 0 ? [...affected] : minorityNodes(values),
      }),
    ];
  },
};

/** CUDA_VISIBLE_DEVICES differs: an empty value hides every GPU on that node. */
const visibleDevicesDrift: DriftRule = {
  id: "fleet-visible-devices-drift",
  title: "CUDA_VISIBLE_DEVICES differs between nodes",
  severity: "warning",
  check(nodes) {
    const values = spread(nodes, "visibleDevices");
    if (values.length < 2) return [];
    const hidden = nodes.filter((n) => n.facts.python.env["CUDA_VISIBLE_DEVICES"] === "").map((n) => n.node);
    const hiddenWithGpus = nodes
      .filter((n) => n.facts.python.env["CUDA_VISIBLE_DEVICES"] === "" && n.facts.host.nvidia.gpus.length > 0)
      .map((n) => n.node);
    return [
      finding(this, {
        severity: hiddenWithGpus.length > 0 ? "error" : "warning",
        message:
          `CUDA_VISIBLE_DEVICES is not the same on every node: ${values.map(([v, ns]) => `${v} on ${nodeListText(ns, 4)}`).join("; ")}.` +
          (hidden.length > 0
            ? ` It is empty on ${nodeListText(hidden)}: CUDA sees no GPU there${hiddenWithGpus.length ? " although nvidia-smi lists some" : ""}, so torch falls back to the CPU or fails.`
            : ""),
        evidence: spreadEvidence("visibleDevices", values),
        fix: "Find what sets it on those nodes (a TaskProlog, the job script, a shell profile, the container's env) and leave it to Slurm's GRES / the device plugin.",
        nodes: hidden.length > 0 ? hidden : minorityNodes(values),
      }),
    ];
  },
};

/**
 * GPU Feature Discovery's labels against what the probe saw on the node: the scheduler places
 * work by the labels, so a label that says "GPU, driver X" where the container sees none (the
 * GPU Operator validator's false "Ready", gpu-operator#2685) or another driver misleads it.
 */
const gfdLabelMismatch: DriftRule = {
  id: "fleet-gfd-label-mismatch",
  title: "GPU Feature Discovery labels disagree with the node",
  severity: "warning",
  check(nodes) {
    const rows: Evidence[] = [];
    const hit: string[] = [];
    for (const n of nodes) {
      const labels = n.labels;
      if (!labels) continue;
      const nvidia = n.facts.host.nvidia;
      const problems: string[] = [];
      const product = labels["nvidia.com/gpu.product"];
      const count = Number(labels["nvidia.com/gpu.count"] ?? "0");
      const driver =
        labels["nvidia.com/cuda.driver-version.full"] ??
        (labels["nvidia.com/cuda.driver.major"]
          ? [
              labels["nvidia.com/cuda.driver.major"],
              labels["nvidia.com/cuda.driver.minor"],
              labels["nvidia.com/cuda.driver.rev"],
            ]
              .filter(Boolean)
              .join(".")
          : undefined);
      if ((product || count > 0) && (nvidia.status !== "ok" || nvidia.gpus.length === 0)) {
        problems.push(
          `labelled ${product ?? "GPU"}${count ? ` x${count}` : ""}, but the container sees no GPU (nvidia-smi ${nvidia.status})`,
        );
      } else if (
        product &&
        nvidia.gpus.length > 0 &&
        !nvidia.gpus.some((g) => g.name.replace(/ /g, "-") === product)
      ) {
        problems.push(`labelled ${product}, nvidia-smi says ${nvidia.gpus[0]?.name ?? "?"}`);
      }
      if (driver && nvidia.driverVersion && driver !== nvidia.driverVersion) {
        problems.push(`labelled driver ${driver}, nvidia-smi says ${nvidia.driverVersion}`);
      }
      if (problems.length) {
        hit.push(n.node);
        rows.push({ label: n.node, value: problems.join("; ") });
      }
    }
    if (hit.length === 0) return [];
    return [
      finding(this, {
        message: `${ofTotal(hit.length, nodes.length)}: the node labels the scheduler places work by do not match what the probe saw there (${nodeListText(hit)}).`,
        evidence: rows,
        fix: "Restart GPU Feature Discovery / the driver pods on those nodes so the labels are redone, and check the device plugin passes the GPU to containers.",
        nodes: hit,
      }),
    ];
  },
};

function dedupeEvidence(evidence: Evidence[]): Evidence[] {
  const seen = new Set<string>();
  return evidence.filter((e) => {
    const key = `${e.label}\u0000${e.value}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

/** The KB answers from versions a node reported; a malformed version must not end the merge. */
function safe<T>(fn: () => T): T | null {
  try {
    return fn();
  } catch {
    return null;
  }
}

export const DRIFT_RULES: readonly DriftRule[] = [
  torchDrift,
  driverDrift,
  gpuMix,
  visibleDevicesDrift,
  gfdLabelMismatch,
  differs(
    "fleet-cuda-driver-drift",
    "The driver's CUDA version differs between nodes",
    "info",
    "driverCuda",
    "The newest CUDA each driver runs differs; PTX built for the newer one cannot be JIT-compiled on the older.",
    "Keep one driver branch across the fleet.",
  ),
  differs(
    "fleet-nccl-drift",
    "NCCL differs between nodes",
    "warning",
    "nccl",
    "Ranks with different NCCL versions can hang or fail in collectives.",
    "Run one torch build (it bundles NCCL) everywhere, and the same NCCL if you override it with LD_LIBRARY_PATH or NCCL_* settings.",
  ),
  differs(
    "fleet-python-drift",
    "Python differs between nodes",
    "warning",
    "python",
    "Different interpreters (a different PATH, venv or module) mean different packages.",
    "Point every node at the same interpreter: activate the same venv in the job script, or pass --python with its path.",
  ),
  differs(
    "fleet-numpy-drift",
    "numpy differs between nodes",
    "warning",
    "numpy",
    "Extensions built against one numpy ABI fail to import under another.",
    "Install the same numpy on every node.",
  ),
  differs(
    "fleet-extension-drift",
    "Extensions differ between nodes",
    "warning",
    "extensions",
    "Nodes import different builds (or fail to import them).",
    "Install the same extension builds everywhere (one image or shared venv).",
  ),
  differs(
    "fleet-binary-coverage-drift",
    "Extension binaries cover different GPU targets between nodes",
    "warning",
    "binaryCoverage",
    "A kernel present on one node's build may be missing on another's.",
    "Build the extensions once for every compute capability in the fleet (TORCH_CUDA_ARCH_LIST) and install that build everywhere.",
  ),
  differs(
    "fleet-cpu-arch-mix",
    "CPU architectures differ between nodes",
    "warning",
    "cpuArch",
    "One environment cannot serve both: wheels are per CPU architecture.",
    "Keep one environment (or image) per CPU architecture, and a partition per architecture.",
  ),
];
