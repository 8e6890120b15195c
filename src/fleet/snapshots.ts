/**
 * `gpuprep fleet ... --from DIR|FILE...`: saved snapshots (`doctor --save` from each node, or
 * `doctor --json` reports) read back as node results, so a fleet report can be rebuilt anywhere.
 * A file that is not a snapshot becomes that node's "garbage" result; only when no file at all is
 * a snapshot does the command stop.
 */
import { readdirSync, statSync } from "node:fs";
import { READ_LIMITS, readTextFile } from "../util/safe-read.js";
import { basename, join } from "node:path";
import { UserError, errorMessage } from "../errors.js";
import { parseFacts } from "../facts/io.js";
import type { Facts } from "../facts/schema.js";
import { checkedVolatile, withVolatile } from "./volatile.js";
import { slotsOf, splitVolatileText, volatileFromText, type Slot, type TextSplit } from "./volatile-text.js";
import type { NodeResult } from "./types.js";

/** Every .json file named, directories read one level deep (sorted, so the order is stable). */
export function snapshotFiles(paths: string[]): string[] {
  const files: string[] = [];
  for (const path of paths) {
    let stats;
    try {
      stats = statSync(path);
    } catch (error) {
      throw new UserError(
        `--from ${path}: ${errorMessage(error)}`,
        "pass snapshot files or a directory of them",
      );
    }
    if (stats.isDirectory()) {
      const names = readdirSync(path)
        .filter((n) => n.endsWith(".json"))
        .sort();
      files.push(...names.map((n) => join(path, n)));
    } else files.push(path);
  }
  if (files.length === 0) {
    throw new UserError(
      `--from ${paths.join(" ")}: no .json files there`,
      "save one per node with `gpuprep doctor --save NODE.json`",
    );
  }
  return files;
}

/** A doctor --json report carries the snapshot in `facts`; accept it as one. */
function snapshotText(text: string): string {
  // The envelope's schema comes first in every document gpuprep writes: look only there.
  if (!text.slice(0, 300).includes('"gpuprep.doctor"')) return text;
  try {
    const doc = JSON.parse(text) as { schema?: unknown; facts?: unknown };
    if (doc.schema === "gpuprep.doctor" && doc.facts) return JSON.stringify(doc.facts);
  } catch {
    // parseFacts reports it
  }
  return text;
}

export function nodeNameOf(facts: Facts, file: string): string {
  if ((facts.target.kind === "slurm" || facts.target.kind === "kube") && facts.target.ref)
    return facts.target.ref;
  return facts.host.hostname ?? basename(file).replace(/\.json$/, "");
}

/**
 * Snapshots of one environment differ only in their volatile fields (volatile.ts: names, timings,
 * free memory, GPU UUIDs, health counters): the full schema check runs once per distinct stable
 * text (volatile-text.ts blanks those values in one scan), each other file's volatile values are
 * read from its text by the slots of the validated file, checked on their own and laid over the
 * shared facts. A file whose volatile keys do not line up with the slots is read in full.
 */
export type ValidatedCache = Map<string, { facts: Facts; key: string; slots: Slot[] | null }>;

function fastPath(split: TextSplit, known: { facts: Facts; slots: Slot[] | null }): Facts | null {
  if (!known.slots) return null;
  try {
    const raw = volatileFromText(split, known.slots, known.facts.target);
    const volatile = raw === null ? null : checkedVolatile(raw);
    return volatile ? withVolatile(known.facts, volatile) : null;
  } catch {
    // A value that is not JSON after all: the full read reports it.
    return null;
  }
}

function slotsOfText(text: string): Slot[] | null {
  try {
    return slotsOf(JSON.parse(text));
  } catch {
    return null;
  }
}

function parseSnapshot(
  text: string,
  file: string,
  cache: ValidatedCache,
): { facts: Facts; key: string | null } {
  const split = splitVolatileText(text);
  const known = split ? cache.get(split.stable) : undefined;
  if (split && known) {
    const facts = fastPath(split, known);
    // The cache's own key instance: a node keeps no 60 KB key of its own.
    if (facts) return { facts, key: known.key };
  }
  const facts = parseFacts(text, file);
  if (split && !known) cache.set(split.stable, { facts, key: split.stable, slots: slotsOfText(text) });
  return { facts, key: known?.key ?? split?.stable ?? null };
}

export function readSnapshot(file: string, cache: ValidatedCache = new Map()): NodeResult {
  const fallback = basename(file).replace(/\.json$/, "");
  try {
    // A FIFO, device or oversized file in the directory is that node's "garbage", never a hang.
    const text = readTextFile(file, { maxBytes: READ_LIMITS.snapshot, hint: "" });
    const { facts, key } = parseSnapshot(snapshotText(text), file, cache);
    return {
      node: nodeNameOf(facts, file),
      status: "ok",
      reason: null,
      facts,
      durationMs: null,
      source: file,
      ...(key !== null ? { contentKey: key } : {}),
    };
  } catch (error) {
    return {
      node: fallback,
      status: "garbage",
      reason: errorMessage(error).slice(0, 300),
      facts: null,
      durationMs: null,
      source: file,
    };
  }
}

export function readSnapshots(paths: string[]): NodeResult[] {
  const cache: ValidatedCache = new Map();
  const results = snapshotFiles(paths).map((file) => readSnapshot(file, cache));
  if (!results.some((r) => r.status === "ok")) {
    throw new UserError(
      `--from: none of the ${results.length} file${results.length === 1 ? " is a gpuprep snapshot" : "s is a gpuprep snapshot"} (${results[0]?.reason ?? ""})`,
      "pass files written by `gpuprep doctor --save FILE` on each node",
    );
  }
  // Two snapshots of one node name (two files from one host): keep both, told apart by file.
  const seen = new Map<string, number>();
  for (const r of results) seen.set(r.node, (seen.get(r.node) ?? 0) + 1);
  for (const r of results)
    if ((seen.get(r.node) ?? 0) > 1) r.node = `${r.node} (${basename(r.source ?? "")})`;
  return results;
}
