/**
 * Loads the packaged knowledge-base tables (src/kb/data/*.json, copied into dist/ by the build),
 * checks every row against its schema, and merges an overlay (written by `gpuprep kb
 * update`) over them.
 */
import { readFileSync } from "node:fs";
import type { z } from "zod";
import type { KnowledgeBaseData, TorchBuildRow } from "./types.js";
import {
  archRowSchema,
  condaTorchBuildRowSchema,
  cudaToolkitRowSchema,
  extensionRowSchema,
  gpuRowSchema,
  importCheckRowSchema,
  ngcImageRowSchema,
  packageRequirementsRowSchema,
  systemRowSchema,
  tableSchema,
  torchBuildRowSchema,
  wheelPythonsRowSchema,
} from "./schema.js";
import type { Overlay } from "./overlay.js";
import { sourceUrl } from "./source-label.js";

// The tables' type lives with the row types; exported here too, beside the loader that makes it.
export type { KnowledgeBaseData };

/** The table files, their table names and row schemas. */
export const TABLES = {
  archs: { file: "archs.json", schema: archRowSchema },
  cudaToolkits: { file: "cuda-toolkits.json", schema: cudaToolkitRowSchema },
  gpus: { file: "gpus.json", schema: gpuRowSchema },
  torchBuilds: { file: "torch-builds.json", schema: torchBuildRowSchema },
  ngcImages: { file: "ngc-images.json", schema: ngcImageRowSchema },
  extensions: { file: "extensions.json", schema: extensionRowSchema },
  condaTorchBuilds: { file: "conda-torch-builds.json", schema: condaTorchBuildRowSchema },
  wheelPythons: { file: "wheel-pythons.json", schema: wheelPythonsRowSchema },
  systems: { file: "systems.json", schema: systemRowSchema },
  importChecks: { file: "import-checks.json", schema: importCheckRowSchema },
  packageRequirements: { file: "package-requirements.json", schema: packageRequirementsRowSchema },
} as const;

export class KnowledgeBaseDataError extends Error {
  override name = "KnowledgeBaseDataError";
}

/** Validate one table document; the error names the file, the row and the field. */
export function parseTable<Row extends z.ZodType>(
  name: string,
  file: string,
  rowSchema: Row,
  json: unknown,
): z.infer<Row>[] {
  const result = tableSchema(name, rowSchema).safeParse(json);
  if (!result.success) {
    const issue = result.error.issues[0];
    const where = issue ? issue.path.join(".") : "?";
    throw new KnowledgeBaseDataError(`${file}: ${where}: ${issue?.message ?? "invalid"}`);
  }
  return result.data.rows;
}

/** The fields of a table that hold a source's URL: a Source's url, and the row parts that name one. */
const SOURCE_FIELDS = new Set(["url", "source"]);

/**
 * The table with every source that is one of gpuprep's own pages ("docs/kb-evidence/gpus.md",
 * not in the npm package) turned into its absolute URL at this release's tag, once, here: every
 * query, text, JSON document and generated file then cites a link that works where gpuprep is
 * installed, and a row's parts that name one of its sources still name it by the same string.
 */
function linkOwnPages(json: unknown, field = ""): unknown {
  if (Array.isArray(json)) return json.map((item) => linkOwnPages(item, field));
  if (json !== null && typeof json === "object")
    return Object.fromEntries(Object.entries(json).map(([key, value]) => [key, linkOwnPages(value, key)]));
  return typeof json === "string" && SOURCE_FIELDS.has(field) ? sourceUrl(json) : json;
}

function readTable<K extends keyof KnowledgeBaseData>(name: K): KnowledgeBaseData[K] {
  const { file, schema } = TABLES[name];
  const url = new URL(`./data/${file}`, import.meta.url);
  return parseTable(
    name,
    file,
    schema as z.ZodType,
    linkOwnPages(JSON.parse(readFileSync(url, "utf8"))),
  ) as KnowledgeBaseData[K];
}

/** The tables exactly as packaged, validated. */
export function loadPackagedData(): KnowledgeBaseData {
  return {
    archs: readTable("archs"),
    cudaToolkits: readTable("cudaToolkits"),
    gpus: readTable("gpus"),
    torchBuilds: readTable("torchBuilds"),
    ngcImages: readTable("ngcImages"),
    extensions: readTable("extensions"),
    condaTorchBuilds: readTable("condaTorchBuilds"),
    wheelPythons: readTable("wheelPythons"),
    systems: readTable("systems"),
    importChecks: readTable("importChecks"),
    packageRequirements: readTable("packageRequirements"),
  };
}

/**
 * Packaged data with the overlay's torch builds merged in: a build we already know keeps its
 * sourced arch list and gains any Python versions the index shows; a build we do not know is
 * added as the index shows it (arch list empty: the index has file names only).
 */
export function mergeOverlay(data: KnowledgeBaseData, overlay: Overlay | null): KnowledgeBaseData {
  if (!overlay) return data;
  const torchBuilds = data.torchBuilds.map((row) => ({ ...row, pythons: [...row.pythons] }));
  const key = (row: Pick<TorchBuildRow, "torch" | "variant" | "platform">) =>
    `${row.torch}|${row.variant}|${row.platform}`;
  const byKey = new Map(torchBuilds.map((row) => [key(row), row]));
  for (const seen of overlay.torchBuilds) {
    const known = byKey.get(key(seen));
    if (known) {
      for (const python of seen.pythons) if (!known.pythons.includes(python)) known.pythons.push(python);
      known.pythons.sort((a, b) => Number(a.slice(2).replace("t", "")) - Number(b.slice(2).replace("t", "")));
    } else {
      torchBuilds.push(seen);
      byKey.set(key(seen), seen);
    }
  }
  return { ...data, torchBuilds };
}
