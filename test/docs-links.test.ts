/**
 * Links and sources a user can follow (issue 29 item 4). The rule (CONTRIBUTING.md, "Links and sources"): what
 * gpuprep prints or writes, and the README, link gpuprep's own pages by their absolute URL at the
 * release tag (src/docs-url.ts at run time, scripts/versioned-links.mjs for the markdown npm
 * ships); a shipped page may link another shipped file relatively. Knowledge-base sources print as
 * what they are beside an absolute link, never as a repository path or an internal index number.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";
import { docsUrl } from "../src/docs-url.js";
import { KnowledgeBase } from "../src/kb/index.js";
import { loadPackagedData, TABLES } from "../src/kb/load.js";
import { isRepositoryDoc, sourceKind } from "../src/kb/source-label.js";
import { makeStyle } from "../src/report/style.js";
import {
  renderKbCuda,
  renderKbExtension,
  renderKbGpu,
  renderKbNgc,
  renderKbPackage,
  renderKbTorch,
} from "../src/report/kb-text.js";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const links = (await import(
  new URL("../../scripts/versioned-links.mjs", import.meta.url).href
)) as typeof import("../scripts/versioned-links.mjs");

/** A path of this repository's docs/ written bare in text, where a reader cannot follow it. */
const BARE_DOCS_PATH = /(?<![\w/.-])docs\/[\w.-]+(?:\/[\w.-]+)*\.(?:md|json|jsonl|txt|tsv|html)\b/;
/** What only gpuprep's maintainers can look up: a search index's entry number, the project's seeds. */
const INTERNAL_REFERENCE = /index entr(?:y|ies) \d|\bseed 00\d\b|\/shared\/seeds/i;

function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? filesUnder(path) : [path];
  });
}

/** Every string of a JSON value with the field that holds it. */
function strings(value: unknown, field = ""): { field: string; text: string }[] {
  if (Array.isArray(value)) return value.flatMap((item) => strings(item, field));
  if (value !== null && typeof value === "object")
    return Object.entries(value).flatMap(([key, inner]) => strings(inner, key));
  return typeof value === "string" ? [{ field, text: value }] : [];
}

const rawTables = Object.values(TABLES).map(({ file }) => ({
  file,
  json: JSON.parse(readFileSync(join(ROOT, "src/kb/data", file), "utf8")) as unknown,
}));
const SOURCE_FIELDS = new Set(["url", "source"]);

test("the README and every markdown file npm ships follow the link rule", () => {
  const shipped = links.shippedMarkdown(ROOT);
  assert.ok(
    shipped.includes("README.md") && shipped.length > 40,
    `shipped markdown: ${shipped.length} files`,
  );
  const broken = shipped.flatMap((file) =>
    links
      .brokenLinks(file, readFileSync(join(ROOT, file), "utf8"), ROOT)
      .map((b) => `${file}: ${b.link}: ${b.problem}`),
  );
  assert.deepEqual(broken, [], "run: node scripts/versioned-links.mjs");
});

test("the link check refuses a relative README link, a link to an unshipped page, a stale version (it can fail)", () => {
  const at = (path: string) => links.versionedUrl(path, links.manifest(ROOT), ROOT);
  const problems = (file: string, text: string) => links.brokenLinks(file, text, ROOT).map((b) => b.problem);
  assert.deepEqual(problems("README.md", "[fleet](docs/fleet.md)"), ["relative link in the README"]);
  assert.deepEqual(problems("docs/rules/x.md", "see [fleet](../fleet.md)"), [
    "docs/fleet.md is not in the package",
  ]);
  assert.deepEqual(problems("docs/rules/x.md", "[json](../json.md) [s](../../schemas/)"), []);
  assert.deepEqual(problems("README.md", `[f](${at("docs/fleet.md").replace(/\/v[^/]+\//, "/v0.0.1/")})`), [
    "not at this version",
  ]);
  assert.deepEqual(problems("README.md", `[f](${at("docs/nowhere.md")})`), [
    "docs/nowhere.md does not exist",
  ]);
  assert.equal(
    links.fixLinks("README.md", "[fleet](docs/fleet.md#slurm)", ROOT),
    `[fleet](${docsUrl("docs/fleet.md#slurm")})`,
  );
  assert.equal(at("docs/rules"), docsUrl("docs/rules").replace("/blob/", "/tree/"));
});

test("every knowledge-base source is an absolute link once loaded, and each gpuprep page it names exists", () => {
  const missing = rawTables.flatMap(({ file, json }) =>
    strings(json)
      .filter(({ field, text }) => SOURCE_FIELDS.has(field) && !/^https?:\/\//.test(text))
      .filter(({ text }) => !isRepositoryDoc(text) || !existsSync(join(ROOT, text)))
      .map(({ text }) => `${file}: ${text}`),
  );
  assert.deepEqual(missing, []);
  const loaded = strings(loadPackagedData()).filter(({ field }) => SOURCE_FIELDS.has(field));
  assert.ok(loaded.length > 1000, `${loaded.length} sources`);
  const relativeOnes = loaded.filter(({ text }) => !/^https:\/\/\S+$/.test(text)).map(({ text }) => text);
  assert.deepEqual([...new Set(relativeOnes)], []);
});

test("no text of the knowledge base names a repository path or an internal reference", () => {
  const bad = rawTables.flatMap(({ file, json }) =>
    strings(json)
      .filter(({ field }) => !SOURCE_FIELDS.has(field))
      .filter(({ text }) => BARE_DOCS_PATH.test(text) || INTERNAL_REFERENCE.test(text))
      .map(({ field, text }) => `${file} ${field}: ${text.slice(0, 120)}`),
  );
  assert.deepEqual(bad, []);
  assert.ok(
    BARE_DOCS_PATH.test("quoted in docs/kb-evidence/gpus.md") && !BARE_DOCS_PATH.test(docsUrl("docs/x.md")),
  );
  assert.ok(INTERNAL_REFERENCE.test("stored public code index entry 65805302197"));
});

test("gpuprep kb prints every source as what it is, beside an absolute link", () => {
  const kb = new KnowledgeBase(loadPackagedData());
  const style = makeStyle(false);
  const pages = [
    ...kb.data.gpus.map((gpu) =>
      renderKbGpu(gpu, style, { variants: kb.gpuVariants(gpu), driverFloor: kb.minimumDriverFor(gpu)! }),
    ),
    ...kb.data.cudaToolkits.map((row) => renderKbCuda(row, style)),
    ...[...new Set(kb.data.torchBuilds.map((row) => row.torch))].map((v) =>
      renderKbTorch(v, kb.torchBuildsForVersion(v), style),
    ),
    ...kb.data.ngcImages.map((image) => renderKbNgc(kb, image, kb.ngcRunsOn(image), style)),
    ...kb.data.extensions.map((row) => renderKbExtension(row, style)),
    ...[...new Set(kb.data.packageRequirements.map((row) => row.package))].map((name) =>
      renderKbPackage(kb.packageRequirements(name), style),
    ),
  ];
  let sourceLines = 0;
  const bad: string[] = [];
  for (const page of pages) {
    const lines = page.split("\n");
    const start = lines.indexOf("sources:");
    for (const line of start < 0 ? [] : lines.slice(start + 1).filter((l) => l.startsWith("  "))) {
      sourceLines++;
      const match = /^ {2}([^,]+), (https:\/\/\S+)/.exec(line);
      if (!match || match[1] !== sourceKind(match[2]!) || match[1] === "source") bad.push(line);
    }
    for (const line of lines) if (BARE_DOCS_PATH.test(line) || INTERNAL_REFERENCE.test(line)) bad.push(line);
  }
  assert.ok(sourceLines > 500, `${sourceLines} source lines`);
  assert.deepEqual(bad, []);
});

test("init's generated files (the examples' goldens) cite no bare repository path", () => {
  const expected = filesUnder(join(ROOT, "examples")).filter((path) => path.includes("/expected/"));
  assert.ok(expected.some((path) => path.endsWith("SETUP.md")));
  const bad = expected.flatMap((path) =>
    readFileSync(path, "utf8")
      .split("\n")
      .filter((line) => BARE_DOCS_PATH.test(line) || INTERNAL_REFERENCE.test(line))
      .map((line) => `${relative(ROOT, path)}: ${line.slice(0, 160)}`),
  );
  assert.deepEqual(bad, []);
});

/** The string pieces of a TypeScript file that name a docs/ path, and whether a docsUrl(...) call holds each. */
function docsPathsInCode(file: string): { text: string; linked: boolean }[] {
  const source = ts.createSourceFile(file, readFileSync(file, "utf8"), ts.ScriptTarget.Latest, true);
  const found: { text: string; linked: boolean }[] = [];
  const insideDocsUrl = (node: ts.Node): boolean => {
    for (let up: ts.Node | undefined = node.parent; up; up = up.parent)
      if (ts.isCallExpression(up) && up.expression.getText(source) === "docsUrl") return true;
    return false;
  };
  const visit = (node: ts.Node): void => {
    if (
      ts.isStringLiteralLike(node) ||
      ts.isTemplateHead(node) ||
      ts.isTemplateMiddle(node) ||
      ts.isTemplateTail(node)
    ) {
      const path = /(?<![\w/.-])docs\/[\w.-]+(?:\/[\w.-]+)*/.exec(node.text);
      if (path) found.push({ text: path[0].replace(/\.+$/, ""), linked: insideDocsUrl(node) });
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

test("code under src/ names a gpuprep page only through docsUrl, or a file the package ships", () => {
  const { files } = links.manifest(ROOT);
  const code = filesUnder(join(ROOT, "src")).filter((p) => p.endsWith(".ts") && !p.endsWith(".test.ts"));
  const bad = code.flatMap((file) =>
    docsPathsInCode(file)
      .filter(({ text, linked }) => !linked && !links.shipped(text.replace(/\$\{.*$/, ""), files))
      .map(({ text }) => `${relative(ROOT, file)}: ${text}`),
  );
  assert.deepEqual(bad, []);
  const probe = join(ROOT, "test/fixtures/docs-links/unlinked-path.ts.txt");
  assert.deepEqual(
    docsPathsInCode(probe).map(({ text, linked }) => `${text} ${linked}`),
    ["docs/knowledge-base.md false", "docs/fleet.md true", "docs/rules false"],
  );
});
