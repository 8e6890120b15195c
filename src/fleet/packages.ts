/**
 * Every installed distribution compared between nodes (not only the known extensions): each
 * node's package map (PEP 503 name -> version, with the extension binaries' GPU targets where the
 * node's binaries were scanned), computed once per distinct environment, and the policy that says
 * which packages are always named and which are left out (--ignore-package).
 */
import type { Facts } from "../facts/schema.js";
import { UserError } from "../errors.js";

/**
 * Named one by one in the drift finding whenever they differ, before the long tail of other
 * packages: the libraries whose version decides whether a training or inference job runs the same
 * way (torch's companions and the CUDA extensions gpuprep import-checks, the NVIDIA runtime
 * wheels torch loads, the frameworks on top).
 */
const ALWAYS_REPORTED = [
  "torchvision",
  "torchaudio",
  "triton",
  "pytorch-triton",
  "flash-attn",
  "xformers",
  "deepspeed",
  "mamba-ssm",
  "causal-conv1d",
  "flashinfer-python",
  "bitsandbytes",
  "apex",
  "transformer-engine",
  "vllm",
  "transformers",
  "accelerate",
  "peft",
  "nvidia-nccl-cu12",
  "nvidia-nccl-cu13",
  "nvidia-cudnn-cu12",
  "nvidia-cudnn-cu13",
  "nvidia-cublas-cu12",
  "nvidia-cublas",
  "nvidia-cuda-runtime-cu12",
  "nvidia-cuda-runtime",
] as const;

/** Packages with a drift rule of their own (fleet-torch-drift, fleet-numpy-drift). */
const OWN_RULES = new Set(["torch", "numpy"]);

export interface PackagePolicy {
  alwaysReported: ReadonlySet<string>;
  /** --ignore-package patterns, PEP 503-normalised; `*` matches any run of characters. */
  ignored: readonly string[];
}

export function normalizeName(name: string): string {
  return name.toLowerCase().replace(/[-_.]+/g, "-");
}

export function packagePolicy(ignore: readonly string[] = []): PackagePolicy {
  for (const pattern of ignore) {
    if (!/^[A-Za-z0-9._*-]+$/.test(pattern))
      throw new UserError(
        `--ignore-package ${JSON.stringify(pattern)} is not a package name or pattern`,
        "e.g. --ignore-package 'nvidia-*' --ignore-package wandb",
      );
  }
  return { alwaysReported: new Set(ALWAYS_REPORTED), ignored: ignore.map(normalizeName) };
}

function globToRegExp(pattern: string): RegExp {
  return new RegExp(
    `^${pattern
      .split("*")
      .map((p) => p.replace(/[.+?^${}()|[\]\\]/g, "\\$&"))
      .join(".*")}$`,
  );
}

/** Whether the drift rule compares this package. */
export function packageCompared(policy: PackagePolicy, name: string): boolean {
  if (OWN_RULES.has(name)) return false;
  return !policy.ignored.some((pattern) => globToRegExp(pattern).test(name));
}

/** The scanned binaries' SASS/PTX targets per owning distribution ("sm_80 sm_90 compute_90"). */
function coverageByDistribution(facts: Facts): Map<string, string> {
  const targets = new Map<string, Set<string>>();
  if (!facts.binaries.scanned) return new Map();
  for (const file of facts.binaries.files) {
    if (!file.distribution) continue;
    const name = normalizeName(file.distribution);
    const set = targets.get(name) ?? new Set<string>();
    for (const target of [...file.sass, ...file.ptx]) set.add(target);
    targets.set(name, set);
  }
  return new Map([...targets].map(([name, set]) => [name, [...set].sort().join(" ")]));
}

/**
 * normalized name -> "version" or "version [GPU targets]"; where one name is installed twice, the
 * copy import finds (the lowest sys.path index) wins, as at import time.
 */
export function packageMapOf(facts: Facts): Map<string, string> {
  const coverage = coverageByDistribution(facts);
  const best = new Map<string, { version: string; pathIndex: number }>();
  for (const dist of facts.python.distributions) {
    const known = best.get(dist.normalizedName);
    if (!known || dist.pathIndex < known.pathIndex)
      best.set(dist.normalizedName, { version: dist.version, pathIndex: dist.pathIndex });
  }
  const map = new Map<string, string>();
  for (const [name, { version }] of best) {
    const targets = coverage.get(name);
    map.set(name, targets ? `${version} [${targets}]` : version);
  }
  return map;
}

/** Nodes of one environment share their distributions and binaries (see snapshots.ts): one map for all. */
const cache = new WeakMap<object, WeakMap<object, Map<string, string>>>();
export function sharedPackageMap(facts: Facts): Map<string, string> {
  const byBinaries = cache.get(facts.python.distributions) ?? new WeakMap<object, Map<string, string>>();
  cache.set(facts.python.distributions, byBinaries);
  let map = byBinaries.get(facts.binaries);
  if (!map) {
    map = packageMapOf(facts);
    byBinaries.set(facts.binaries, map);
  }
  return map;
}

export const NOT_INSTALLED_PACKAGE = "not installed";
