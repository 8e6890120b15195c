/**
 * Wheel variants (PEP 825, https://peps.python.org/pep-0825/, python/peps at 02bcf971): the
 * `*.dist-info/variant.json` a variant wheel carries, which label a variant-aware installer picks
 * for a machine, and whether the labels' `nvidia :: sm_arch` properties say what the binaries hold.
 *
 * Which properties a machine is compatible with is left by PEP 825 to providers; for the nvidia
 * namespace this follows NVIDIA's reference provider (wheelnext/nvidia-variant-provider,
 * nvidia_variant_provider/plugin.py at 2ab96595): the driver's CUDA version v gives
 * `cuda_version_lower_bound` values v, v-0.1 ... 11 and `cuda_version_upper_bound` values above v;
 * the GPU of capability M.m (only the newest GPU of a machine) gives `sm_arch` values `Mm_real`,
 * `M(m-1)_real` ... `M0_real`, then `M0_virtual`. The provider's vocabulary has no arch-specific
 * ('a') or family ('f') targets and ignores the Tegra exceptions, so a label can promise what the
 * binaries cannot keep: that is what compareVariantWithBinaries finds.
 */
import { coverageFor, type ComputeCapability } from "../kb/compat.js";
import type { FileScan } from "../fatbin/scan-file.js";
import { distinctTargets } from "../fatbin/scan-file.js";
import { parseBoundedJson } from "./json.js";

/** namespace -> feature -> values */
type VariantProperties = Record<string, Record<string, string[]>>;

export interface VariantMetadata {
  schema: string | null;
  namespaces: string[];
  featurePriorities: Record<string, string[]>;
  propertyPriorities: Record<string, Record<string, string[]>>;
  variants: Record<string, VariantProperties>;
}

/** variant.json that does not read as PEP 825 says it must. */
export class VariantJsonError extends Error {}

const NAME = /^[a-z0-9_]+$/;
const VALUE = /^[a-z0-9_.]+$/;
const LABEL = /^[0-9a-z_.]{1,16}$/;
const MAX_VALUES = 4096;

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function stringList(value: unknown, pattern: RegExp, where: string): string[] {
  if (
    !Array.isArray(value) ||
    value.length > MAX_VALUES ||
    !value.every((v) => typeof v === "string" && pattern.test(v))
  )
    throw new VariantJsonError(`${where}: not a list of names`);
  return value as string[];
}

/** variant.json (or an index's {name}-{version}-variants.json) read and checked; throws with where it is wrong. */
export function parseVariantJson(text: string): VariantMetadata {
  let json: unknown;
  try {
    json = parseBoundedJson(text, 1024 * 1024);
  } catch (error) {
    throw new VariantJsonError((error as Error).message);
  }
  if (!isObject(json)) throw new VariantJsonError("not a JSON object");
  const priorities = json["default-priorities"];
  if (!isObject(priorities)) throw new VariantJsonError("default-priorities is missing");
  const namespaces = stringList(priorities["namespace"], NAME, "default-priorities.namespace");
  const featurePriorities: Record<string, string[]> = {};
  const features = priorities["feature"] ?? {};
  if (!isObject(features)) throw new VariantJsonError("default-priorities.feature is not an object");
  for (const [namespace, list] of Object.entries(features))
    featurePriorities[namespace] = stringList(list, NAME, `default-priorities.feature.${namespace}`);
  const propertyPriorities: Record<string, Record<string, string[]>> = {};
  const properties = priorities["property"] ?? {};
  if (!isObject(properties)) throw new VariantJsonError("default-priorities.property is not an object");
  for (const [namespace, byFeature] of Object.entries(properties)) {
    if (!isObject(byFeature))
      throw new VariantJsonError(`default-priorities.property.${namespace} is not an object`);
    propertyPriorities[namespace] = {};
    for (const [feature, list] of Object.entries(byFeature))
      propertyPriorities[namespace][feature] = stringList(
        list,
        VALUE,
        `default-priorities.property.${namespace}.${feature}`,
      );
  }
  const variantsJson = json["variants"];
  if (!isObject(variantsJson)) throw new VariantJsonError("variants is missing");
  const variants: Record<string, VariantProperties> = {};
  for (const [label, byNamespace] of Object.entries(variantsJson)) {
    if (!LABEL.test(label))
      throw new VariantJsonError(`variant label "${label.slice(0, 20)}" is not a label`);
    if (!isObject(byNamespace)) throw new VariantJsonError(`variants.${label} is not an object`);
    const props: VariantProperties = {};
    for (const [namespace, byFeature] of Object.entries(byNamespace)) {
      if (!NAME.test(namespace) || !isObject(byFeature))
        throw new VariantJsonError(`variants.${label}: bad namespace`);
      if (!namespaces.includes(namespace))
        throw new VariantJsonError(`variants.${label}: namespace ${namespace} is not in default-priorities`);
      props[namespace] = {};
      for (const [feature, values] of Object.entries(byFeature)) {
        if (!NAME.test(feature))
          throw new VariantJsonError(`variants.${label}.${namespace}: bad feature name`);
        props[namespace][feature] = stringList(values, VALUE, `variants.${label}.${namespace}.${feature}`);
      }
    }
    variants[label] = props;
  }
  const schema = typeof json["$schema"] === "string" ? json["$schema"] : null;
  return { schema, namespaces, featurePriorities, propertyPriorities, variants };
}

/** The machine a variant is picked for. */
interface VariantTarget {
  capability: ComputeCapability;
  /** The CUDA version the driver supports ("13.0"), or null when not known. */
  driverCuda: string | null;
}

/** feature -> compatible values, best first, for the nvidia namespace (the reference provider's rules). */
function nvidiaCompatible(target: VariantTarget): Map<string, string[]> {
  const supported = new Map<string, string[]>();
  if (target.driverCuda) {
    const [major, minor] = target.driverCuda.split(".").map(Number) as [number, number];
    if (major >= 11 && major <= 15 && minor >= 0 && minor <= 20) {
      const lower: string[] = [];
      for (let m = major; m >= 11; m--) {
        for (let n = m === major ? minor : 20; n >= 0; n--) lower.push(`${m}.${n}`);
        lower.push(`${m}`);
      }
      const upper: string[] = [];
      for (let m = 15; m >= major; m--) {
        for (let n = 20; n > (m === major ? minor : -1); n--) upper.push(`${m}.${n}`);
        if (m > major) upper.push(`${m}`);
      }
      supported.set("cuda_version_lower_bound", lower);
      supported.set("cuda_version_upper_bound", upper);
    }
  }
  const { major, minor } = target.capability;
  if (major >= 5) {
    const values: string[] = [];
    for (let m = minor; m >= 0; m--) values.push(`${major}${m}_real`);
    values.push(`${major}0_virtual`);
    supported.set("sm_arch", values);
  }
  return supported;
}

export interface VariantChoice {
  /** The label picked, or null when no variant is compatible (the installer falls back). */
  label: string | null;
  /** Every compatible label, best first. */
  ordered: string[];
  /** Why each incompatible label was left out. */
  rejected: { label: string; reason: string }[];
  /** Set when the driver's CUDA version was not known and its bounds were not judged. */
  assumption: string | null;
}

/**
 * PEP 825's ordering ("Variant ordering", steps 1-7) over the labels compatible with the target.
 * Namespaces other than nvidia are taken as incompatible (no provider for them here): the null
 * variant (no properties) always fits.
 */
export function chooseVariant(meta: VariantMetadata, target: VariantTarget): VariantChoice {
  const supported = nvidiaCompatible(target);
  const judgeCuda = target.driverCuda !== null;
  const rejected: VariantChoice["rejected"] = [];
  const compatible: string[] = [];
  for (const [label, props] of Object.entries(meta.variants)) {
    const reason = incompatibility(props, supported, judgeCuda);
    if (reason) rejected.push({ label, reason });
    else compatible.push(label);
  }
  const featureOrder = (namespace: string): string[] => {
    const order = [...(meta.featurePriorities[namespace] ?? [])];
    for (const feature of namespace === "nvidia" ? supported.keys() : [])
      if (!order.includes(feature)) order.push(feature);
    return order;
  };
  const valueOrder = (namespace: string, feature: string): string[] => {
    const order = [...(meta.propertyPriorities[namespace]?.[feature] ?? [])];
    for (const value of namespace === "nvidia" ? (supported.get(feature) ?? []) : [])
      if (!order.includes(value)) order.push(value);
    return order;
  };
  const key = (label: string): number[][] => {
    const props = meta.variants[label] ?? {};
    const keys: number[][] = [];
    for (const [namespace, features] of Object.entries(props))
      for (const [feature, values] of Object.entries(features)) {
        const order = valueOrder(namespace, feature);
        const best = order.findIndex((value) => values.includes(value));
        keys.push([
          meta.namespaces.indexOf(namespace),
          featureOrder(namespace).indexOf(feature),
          best < 0 ? order.length : best,
        ]);
      }
    return keys.sort(compareKeys);
  };
  const ordered = compatible.sort((a, b) => {
    const ka = key(a);
    const kb = key(b);
    for (let i = 0; i < Math.min(ka.length, kb.length); i++) {
      const diff = compareKeys(ka[i] as number[], kb[i] as number[]);
      if (diff !== 0) return diff;
    }
    if (ka.length !== kb.length) return kb.length - ka.length; // more properties first
    return a < b ? -1 : a > b ? 1 : 0;
  });
  return {
    label: ordered[0] ?? null,
    ordered,
    rejected,
    assumption: judgeCuda ? null : "the driver's CUDA version is not known: cuda_version bounds taken as met",
  };
}

function compareKeys(a: number[], b: number[]): number {
  for (let i = 0; i < 3; i++) if (a[i] !== b[i]) return (a[i] as number) - (b[i] as number);
  return 0;
}

/** Why a label does not fit the machine, or null when it does (at least one value per feature). */
function incompatibility(
  props: VariantProperties,
  supported: Map<string, string[]>,
  judgeCuda: boolean,
): string | null {
  for (const [namespace, features] of Object.entries(props)) {
    if (Object.keys(features).length === 0) continue;
    if (namespace !== "nvidia") return `namespace ${namespace} has no provider here`;
    for (const [feature, values] of Object.entries(features)) {
      if (!judgeCuda && feature.startsWith("cuda_version_")) continue;
      const ok = supported.get(feature);
      if (!ok) return `nvidia :: ${feature} is not provided for this machine`;
      if (!values.some((value) => ok.includes(value)))
        return `nvidia :: ${feature} :: ${values.join(" | ")} does not fit`;
    }
  }
  return null;
}

interface VariantFinding {
  severity: "error" | "warning";
  message: string;
}

/** "120_real" -> { capability 12.0, real }, or null. */
function smArchValue(value: string): { capability: ComputeCapability; kind: "real" | "virtual" } | null {
  const match = /^(\d{1,2})(\d)_(real|virtual)$/.exec(value);
  if (!match) return null;
  return {
    capability: { major: Number(match[1]), minor: Number(match[2]) },
    kind: match[3] as "real" | "virtual",
  };
}

/**
 * The label's `nvidia :: sm_arch` values against the libraries' fatbins: each promise must hold for
 * every library with CUDA code, on the capability it names and on every known GPU the provider
 * would offer it to (same major, higher minor); and SASS every library has for a capability the
 * label does not name is reported too (the installer will not offer the wheel there).
 */
export function compareVariantWithBinaries(
  label: string,
  props: VariantProperties,
  libraries: FileScan[],
  knownCapabilities: ComputeCapability[],
): VariantFinding[] {
  const values = props["nvidia"]?.["sm_arch"];
  const withCode = libraries.filter((l) => l.entries.some((e) => e.kind === "sass" || e.kind === "ptx"));
  if (!values || withCode.length === 0) return [];
  const findings: VariantFinding[] = [];
  for (const value of values) {
    const parsed = smArchValue(value);
    if (!parsed) continue;
    for (const device of dedupe(offeredTo(parsed, knownCapabilities))) {
      const finding = brokenPromise(label, value, parsed, device, withCode);
      if (finding) findings.push(finding);
    }
  }
  const declared = new Set(values);
  for (const sm of commonPlainSass(withCode)) {
    const value = `${sm}_real`;
    if (!declared.has(value))
      findings.push({
        severity: "warning",
        message: `every library of label ${label} has sm_${sm} code, but the label does not declare nvidia :: sm_arch :: ${value}: a variant-aware installer will not offer it to those GPUs`,
      });
  }
  return findings;
}

/**
 * The GPUs the NVIDIA provider offers an sm_arch value to: a real one to its capability and the
 * known ones of its major with a higher minor; a virtual X.0 to every known one of major X.
 */
function offeredTo(
  { capability, kind }: NonNullable<ReturnType<typeof smArchValue>>,
  knownCapabilities: ComputeCapability[],
): ComputeCapability[] {
  if (kind === "real")
    return [
      capability,
      ...knownCapabilities.filter((k) => k.major === capability.major && k.minor > capability.minor),
    ];
  return capability.minor === 0 ? knownCapabilities.filter((k) => k.major === capability.major) : [];
}

function targetsOf(library: FileScan): string[] {
  return [...distinctTargets(library.entries, "sass"), ...distinctTargets(library.entries, "ptx")];
}

/**
 * The libraries that break the value's promise on `device`: on the capability a real value names,
 * no SASS (a warning where all of them still run through the PTX JIT); elsewhere, no code that runs.
 */
function brokenPromise(
  label: string,
  value: string,
  { capability, kind }: NonNullable<ReturnType<typeof smArchValue>>,
  device: ComputeCapability,
  withCode: FileScan[],
): VariantFinding | null {
  const native = kind === "real" && device === capability;
  const failing = withCode.filter((l) => {
    const verdict = coverageFor(targetsOf(l), device);
    return native ? verdict.how !== "sass" : verdict.how === "none";
  });
  if (failing.length === 0) return null;
  const names =
    failing
      .slice(0, 3)
      .map((l) => l.path)
      .join(", ") + (failing.length > 3 ? ` and ${failing.length - 3} more` : "");
  const cc = `${device.major}.${device.minor}`;
  const onDevice =
    device === capability ? `on ${cc}` : `on ${cc}, to which the NVIDIA provider offers ${value}`;
  return {
    severity:
      native && failing.every((l) => coverageFor(targetsOf(l), device).how === "ptx-jit")
        ? "warning"
        : "error",
    message: `label ${label} declares nvidia :: sm_arch :: ${value}, but ${names} ${failing.length === 1 ? "has" : "have"} no ${native ? "native " : ""}code that runs ${onDevice}`,
  };
}

function dedupe(list: ComputeCapability[]): ComputeCapability[] {
  const seen = new Set<string>();
  return list.filter((c) => {
    const key = `${c.major}.${c.minor}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

/** SASS targets (plain or family) that every library has, as "110". */
function commonPlainSass(libraries: FileScan[]): string[] {
  const sets = libraries.map(
    (library) =>
      new Set(library.entries.filter((e) => e.kind === "sass" && e.variant !== "a").map((e) => String(e.sm))),
  );
  const first = sets[0] ?? new Set<string>();
  return [...first].filter((sm) => sets.every((set) => set.has(sm))).sort((a, b) => Number(a) - Number(b));
}
