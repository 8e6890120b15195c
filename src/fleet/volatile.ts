/**
 * The fields that differ between nodes of one environment without changing any verdict: names
 * (capturedAt, target.ref, hostname), measurements (free memory, durations), GPU UUIDs, the driver
 * module's build line, the passive GPU health counters. A fleet hashes each snapshot without them
 * (its "stable key"), validates and diagnoses each distinct environment once, and keeps per node
 * only these few values over a shared copy of the rest: 10,000 nodes cost about what their distinct
 * environments cost, not 10,000 full snapshots (issue 26 item 5).
 *
 * Doctor's rules read none of these for a verdict (a duration appears in a timeout's message, the
 * free /dev/shm in an evidence line): test/fleet/volatile-fields.test.ts varies every one on every
 * capture and checks that the findings stay the same.
 */
import { z } from "zod";
import { FactsSchema, GpuHealthSchema, type Facts } from "../facts/schema.js";

type Json = Record<string, unknown>;

function isObject(value: unknown): value is Json {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function arrayOf(value: unknown): unknown[] | null {
  return Array.isArray(value) ? value : null;
}

/** The per-node values, as read from a snapshot (checked by VolatileSchema before use). */
const VolatileSchema = z.object({
  capturedAt: FactsSchema.shape.capturedAt,
  target: FactsSchema.shape.target,
  hostname: z.string().nullable().optional(),
  memAvailableBytes: z.number().nullable().optional(),
  shmFreeBytes: z.number().nullable(),
  kernelModule: z.string().nullable(),
  uuids: z.array(z.string().nullable()),
  gpuHealth: GpuHealthSchema.optional(),
  probeMs: z.number(),
  torchLiveMs: z.number(),
  extensionMs: z.array(z.number()),
  binariesMs: z.number(),
});
type Volatile = z.infer<typeof VolatileSchema>;

/**
 * The snapshot without its volatile fields (a shallow copy; the input is not changed) and those
 * fields apart, or null when the data is not shaped like a snapshot (the full check reports why).
 */
function splitVolatile(data: unknown): { stable: Json; volatile: unknown } | null {
  if (!isObject(data)) return null;
  const { target, host, python, binaries } = data;
  if (!isObject(target) || !isObject(host) || !isObject(python) || !isObject(binaries)) return null;
  const { shm, nvidia } = host;
  const { probe, torchLive } = python;
  const gpus = isObject(nvidia) ? arrayOf(nvidia["gpus"]) : null;
  const extensions = arrayOf(python["extensions"]);
  if (!isObject(shm) || !isObject(nvidia) || !gpus || !isObject(probe) || !isObject(torchLive) || !extensions)
    return null;
  if (!gpus.every(isObject) || !extensions.every(isObject)) return null;
  const volatile = {
    capturedAt: data["capturedAt"],
    target,
    hostname: host["hostname"],
    memAvailableBytes: host["memAvailableBytes"],
    shmFreeBytes: shm["freeBytes"],
    kernelModule: nvidia["kernelModule"],
    uuids: gpus.map((g) => g["uuid"]),
    gpuHealth: host["gpuHealth"],
    probeMs: probe["durationMs"],
    torchLiveMs: torchLive["durationMs"],
    extensionMs: extensions.map((e) => e["durationMs"]),
    binariesMs: binaries["durationMs"],
  };
  const stable: Json = {
    ...data,
    capturedAt: null,
    target: { ...target, ref: null },
    host: {
      ...host,
      hostname: null,
      memAvailableBytes: null,
      gpuHealth: null,
      shm: { ...shm, freeBytes: null },
      // Only whether the module line exists is read (rule-helpers/view.ts) while nvidia-smi answers.
      nvidia: {
        ...nvidia,
        kernelModule:
          nvidia["status"] === "ok" && typeof nvidia["kernelModule"] === "string"
            ? ""
            : nvidia["kernelModule"],
        gpus: gpus.map((g) => ({ ...g, uuid: null })),
      },
    },
    python: {
      ...python,
      probe: { ...probe, durationMs: null },
      torchLive: { ...torchLive, durationMs: null },
      extensions: extensions.map((e) => ({ ...e, durationMs: null })),
    },
    binaries: { ...binaries, durationMs: null },
  };
  return { stable, volatile };
}

/**
 * The stable part as text: equal keys, one environment. Not hashed: V8 hashes a string key once
 * and compares equal ones by length and bytes, cheaper than a cryptographic hash of 60 KB; callers
 * keep the one instance the cache holds (snapshots.ts), so 10,000 nodes share a handful of keys.
 */
function stableKeyOf(stable: Json): string {
  return JSON.stringify(stable);
}

/** The stable key of a whole snapshot (or live Facts), or null when it is not shaped like one. */
export function stableKey(data: unknown): string | null {
  const split = splitVolatile(data);
  return split ? stableKeyOf(split.stable) : null;
}

/** The volatile values checked, or null when any is malformed (then the full check runs). */
export function checkedVolatile(raw: unknown): Volatile | null {
  const parsed = VolatileSchema.safeParse(raw);
  return parsed.success ? parsed.data : null;
}

/** One node's facts: the environment's shared facts with this node's volatile values over them. */
export function withVolatile(known: Facts, v: Volatile): Facts | null {
  const gpus = known.host.nvidia.gpus;
  const extensions = known.python.extensions;
  if (v.uuids.length !== gpus.length || v.extensionMs.length !== extensions.length) return null;
  const { gpuHealth: _shared, ...host } = known.host;
  return {
    ...known,
    capturedAt: v.capturedAt,
    target: v.target,
    host: {
      ...host,
      ...(v.hostname !== undefined ? { hostname: v.hostname } : {}),
      ...(v.memAvailableBytes !== undefined ? { memAvailableBytes: v.memAvailableBytes } : {}),
      ...(v.gpuHealth !== undefined ? { gpuHealth: v.gpuHealth } : {}),
      shm: { ...host.shm, freeBytes: v.shmFreeBytes },
      nvidia: {
        ...host.nvidia,
        kernelModule: v.kernelModule,
        gpus: gpus.map((g, i) => ({ ...g, uuid: v.uuids[i] ?? null })),
      },
    },
    python: {
      ...known.python,
      probe: { ...known.python.probe, durationMs: v.probeMs },
      torchLive: { ...known.python.torchLive, durationMs: v.torchLiveMs },
      extensions: extensions.map((e, i) => ({ ...e, durationMs: v.extensionMs[i] ?? e.durationMs })),
    },
    binaries: { ...known.binaries, durationMs: v.binariesMs },
  };
}
