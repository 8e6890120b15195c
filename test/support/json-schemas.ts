/**
 * Checking a document against the JSON Schema gpuprep ships for it (schemas/, picked by the
 * document's own `schema` and `schemaVersion`), with ajv as a script would, and against the
 * closed variant (every object without extra fields) so a field printed but not declared fails.
 */
import { createRequire } from "node:module";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { ErrorObject, ValidateFunction } from "ajv";
import { JSON_DOCUMENTS, jsonSchemaOf, schemaFileName } from "../../src/report/schemas/index.js";

const require = createRequire(import.meta.url);
const Ajv2020 = require("ajv/dist/2020").default as typeof import("ajv").default;
const addFormats = require("ajv-formats").default as (ajv: unknown) => void;

/** Tests run from dist/test; the shipped schemas stay in the source tree. */
export const SCHEMAS_DIR = fileURLToPath(new URL("../../../schemas/", import.meta.url));

function newAjv() {
  const ajv = new Ajv2020({ allErrors: true });
  addFormats(ajv);
  return ajv;
}
const closedAjv = newAjv();
/** One ajv per schemas/ folder (this tree's, an installed package's): each holds the same $ids. */
const shippedAjvs = new Map<string, ReturnType<typeof newAjv>>();
const cache = new Map<string, { shipped: ValidateFunction; closed: ValidateFunction }>();

function validatorsFor(id: string, version: number, dir: string) {
  const key = `${dir}:${id}@${version}`;
  let pair = cache.get(key);
  if (!pair) {
    const document = JSON_DOCUMENTS.find((d) => d.id === id && d.version === version);
    if (!document) return null;
    const shipped = JSON.parse(readFileSync(join(dir, schemaFileName(document)), "utf8")) as object;
    if (!shippedAjvs.has(dir)) shippedAjvs.set(dir, newAjv());
    const closedKey = `closed:${id}@${version}`;
    const closed =
      closedAjv.getSchema(closedKey) ??
      (closedAjv.addSchema(jsonSchemaOf(document, "output"), closedKey), closedAjv.getSchema(closedKey)!);
    pair = { shipped: shippedAjvs.get(dir)!.compile(shipped), closed };
    cache.set(key, pair);
  }
  return pair;
}

function describe(errors: ErrorObject[] | null | undefined): string[] {
  return (errors ?? []).slice(0, 5).map((e) => `${e.instancePath || "/"} ${e.message ?? "invalid"}`);
}

/**
 * The reasons this document fails its schema; [] when it passes the shipped one (from `dir`,
 * this tree's schemas/ unless given) and, with "both", the closed one.
 */
export function schemaErrors(doc: unknown, which: "both" | "shipped" = "both", dir = SCHEMAS_DIR): string[] {
  const header = doc as { schema?: unknown; schemaVersion?: unknown } | null;
  if (typeof header?.schema !== "string" || typeof header.schemaVersion !== "number")
    return ["no schema/schemaVersion header"];
  const validators = validatorsFor(header.schema, header.schemaVersion, dir);
  if (!validators) return [`no shipped schema for ${header.schema} version ${header.schemaVersion}`];
  const { shipped, closed } = validators;
  if (!shipped(doc)) return describe(shipped.errors).map((e) => `shipped schema: ${e}`);
  if (which === "both" && !closed(doc)) return describe(closed.errors).map((e) => `closed schema: ${e}`);
  return [];
}
