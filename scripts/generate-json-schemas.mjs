// Writes schemas/<id>.v<version>.schema.json, the JSON Schemas shipped in the package, from the
// zod schemas of src/report/schemas (built into dist/ first: `npm run schemas` does both). Files
// of documents no longer listed are removed, so schemas/ holds exactly what this release prints.
// test/json-schemas.test.ts fails when the committed files differ from what this writes.
import { mkdirSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { renderSchemaFiles } from "../dist/src/report/schemas/index.js";

const DIR = "schemas";
mkdirSync(DIR, { recursive: true });
const files = renderSchemaFiles();
for (const name of readdirSync(DIR))
  if (name.endsWith(".schema.json") && !files.has(name)) rmSync(join(DIR, name));
for (const [name, text] of files) writeFileSync(join(DIR, name), text);
console.log(`wrote ${files.size} JSON Schemas to ${DIR}/`);
