/**
 * `--baseline FILE`: what every node is judged against, instead of the largest group. Either a
 * snapshot of a known-good node (`gpuprep doctor --save`, or a `doctor --json` report), whose
 * fingerprint and package list every node must match, or a small file of expected values (YAML or
 * JSON) naming only what matters: torch and its CUDA, the driver branch, the GPU model and count,
 * Python, package versions. Fields it does not name are judged against the majority.
 */
import { z } from "zod";
import { parse as parseYaml } from "yaml";
import { UserError, errorMessage } from "../errors.js";
import { parseFacts } from "../facts/io.js";
import type { Facts } from "../facts/schema.js";
import { READ_LIMITS, readTextFile } from "../util/safe-read.js";
import { fingerprintOf } from "./fingerprint.js";
import { normalizeName, packageMapOf } from "./packages.js";
import type { Fingerprint } from "./types.js";

const BASELINE_SCHEMA = "gpuprep.fleet.baseline";

const versionText = z.union([z.string(), z.number()]).transform(String);

/** The expected-values file. Strict: a misspelt key is an error, not a silently ignored check. */
const ExpectedValuesSchema = z
  .object({
    schema: z.literal(BASELINE_SCHEMA).optional(),
    /** torch's version as torch reports it: "2.11.0+cu130". */
    torch: versionText.optional(),
    /** The CUDA torch was built with: "13.0". */
    torchCuda: versionText.optional(),
    /** The driver's major version: "580" (or a full version "580.159.04"). */
    driver: versionText.optional(),
    /** nvidia-smi's name: "NVIDIA H100 80GB HBM3". */
    gpu: z.string().optional(),
    gpuCount: z.number().int().min(0).optional(),
    /** "3.12" or "3.12.3"; a path ("/opt/venv/bin/python3") pins the interpreter too. */
    python: versionText.optional(),
    pythonPath: z.string().optional(),
    /** Package name -> exact version (PEP 503 names; "not installed" to require its absence). */
    packages: z.record(z.string(), versionText).optional(),
  })
  .strict();

type ExpectedValues = z.infer<typeof ExpectedValuesSchema>;

export interface Baseline {
  /** The file, as given. */
  source: string;
  kind: "snapshot" | "expected";
  /** A snapshot's whole fingerprint; undefined for an expected-values file. */
  fingerprint?: Fingerprint;
  /** The node a snapshot was taken on, when it says. */
  node?: string;
  expected: Omit<ExpectedValues, "schema" | "packages">;
  /** normalized name -> version; a snapshot names every package it has. */
  packages: Map<string, string>;
  /** A snapshot's package list is complete: a package it lacks must be absent on the nodes too. */
  packagesComplete: boolean;
}

function fromSnapshot(facts: Facts, source: string): Baseline {
  const torch = facts.python.torch;
  const gpus = facts.host.nvidia.gpus;
  return {
    source,
    kind: "snapshot",
    fingerprint: fingerprintOf(facts),
    ...(facts.host.hostname ? { node: facts.host.hostname } : {}),
    expected: {
      ...(torch ? { torch: torch.version } : {}),
      ...(torch?.cudaVersion ? { torchCuda: torch.cudaVersion } : {}),
      ...(facts.host.nvidia.driverVersion ? { driver: facts.host.nvidia.driverVersion } : {}),
      ...(gpus[0] ? { gpu: gpus[0].name, gpuCount: gpus.length } : {}),
      python: facts.python.interpreter.version,
      pythonPath: facts.python.interpreter.executable,
    },
    packages: packageMapOf(facts),
    packagesComplete: true,
  };
}

function fromExpected(data: unknown, source: string): Baseline {
  const parsed = ExpectedValuesSchema.safeParse(data);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const where = issue?.path.join(".") || "(top level)";
    throw new UserError(
      `--baseline ${source}: ${where}: ${issue?.message ?? "invalid"}`,
      "a snapshot (gpuprep doctor --save FILE) or expected values: torch, torchCuda, driver, gpu, gpuCount, python, pythonPath, packages",
    );
  }
  const { schema: _schema, packages, ...expected } = parsed.data;
  if (Object.keys(expected).length === 0 && Object.keys(packages ?? {}).length === 0) {
    throw new UserError(`--baseline ${source} names no expected value`, "e.g. torch: 2.11.0+cu130");
  }
  return {
    source,
    kind: "expected",
    expected,
    packages: new Map(
      Object.entries(packages ?? {}).map(([name, version]) => [normalizeName(name), version]),
    ),
    packagesComplete: false,
  };
}

/** A doctor --json report carries the snapshot in `facts`. */
function snapshotInside(data: unknown): unknown {
  const doc = data as { schema?: unknown; facts?: unknown } | null;
  if (doc?.schema === "gpuprep.doctor" && doc.facts) return doc.facts;
  return doc?.schema === "gpuprep.facts" ? doc : null;
}

export function readBaseline(path: string): Baseline {
  const text = readTextFile(path, {
    maxBytes: READ_LIMITS.snapshot,
    hint: "pass a snapshot or an expected-values file",
  });
  let data: unknown;
  try {
    data = path.endsWith(".json") || text.trimStart().startsWith("{") ? JSON.parse(text) : parseYaml(text);
  } catch (error) {
    throw new UserError(
      `--baseline ${path}: not JSON or YAML (${errorMessage(error).split("\n")[0]})`,
      "pass a snapshot (gpuprep doctor --save FILE) or a YAML file of expected values",
    );
  }
  const snapshot = snapshotInside(data);
  if (snapshot) return fromSnapshot(parseFacts(JSON.stringify(snapshot), path), path);
  return fromExpected(data, path);
}
