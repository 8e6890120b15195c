/** Loads the packaged knowledge-base tables (src/kb/data/*.json, copied into dist/ by the build). */
import { readFileSync } from "node:fs";
import type { ArchRow, CudaToolkitRow } from "./types.js";

export interface KnowledgeBaseData {
  archs: ArchRow[];
  cudaToolkits: CudaToolkitRow[];
}

function readTable<Row>(file: string): Row[] {
  const url = new URL(`./data/${file}`, import.meta.url);
  const parsed = JSON.parse(readFileSync(url, "utf8")) as { rows: Row[] };
  return parsed.rows;
}

export function loadPackagedData(): KnowledgeBaseData {
  return {
    archs: readTable<ArchRow>("archs.json"),
    cudaToolkits: readTable<CudaToolkitRow>("cuda-toolkits.json"),
  };
}
