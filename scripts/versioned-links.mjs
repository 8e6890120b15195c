/**
 * gpuprep's rule for links to its own documentation (CONTRIBUTING.md, "Links and sources"): everything a user
 * meets outside a checkout of the repository links a page by its absolute URL at the release tag,
 * https://github.com/gpuprep/gpuprep/blob/vX.Y.Z/PATH. The CLI builds those at run time
 * (src/docs-url.ts); the markdown npm ships (README.md, and the docs the package.json "files" list
 * names) carries them written out, and this script writes them:
 *
 *   node scripts/versioned-links.mjs          rewrite the links (npm's "version" script runs it)
 *   node scripts/versioned-links.mjs --check  list the links that break the rule, exit 1 if any
 *
 * In README.md every link into the repository is absolute (npmjs.com shows the README without the
 * repository's files). A shipped page may link another shipped file relatively (docs/json.md to
 * schemas/); its link to a page the package lacks is made absolute. test/docs-links.test.ts runs
 * the same check.
 */
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join, posix } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("../", import.meta.url));

/** The manifest's version and repository, as src/version.ts reads them. */
export function manifest(root = ROOT) {
  const json = JSON.parse(readFileSync(join(root, "package.json"), "utf8"));
  const url = typeof json.repository === "string" ? json.repository : (json.repository?.url ?? "");
  return {
    version: json.version,
    repository: url.replace(/^git\+/, "").replace(/\.git$/, ""),
    files: json.files ?? [],
  };
}

/** Whether the package ships the repository path `path` (the non-dist entries of "files"). */
export function shipped(path, files) {
  const clean = path.replace(/\/$/, "");
  return files
    .filter((entry) => !entry.startsWith("!") && !entry.includes("*"))
    .some((entry) => clean === entry || clean.startsWith(`${entry}/`));
}

/** The markdown files npm ships: README.md and the .md files under the "files" entries. */
export function shippedMarkdown(root = ROOT) {
  const { files } = manifest(root);
  const found = ["README.md"];
  const walk = (path) => {
    const full = join(root, path);
    if (!existsSync(full)) return;
    if (statSync(full).isDirectory()) for (const name of readdirSync(full)) walk(posix.join(path, name));
    else if (path.endsWith(".md")) found.push(path);
  };
  for (const entry of files) if (!entry.startsWith("!") && !entry.includes("*")) walk(entry);
  return [...new Set(found)].sort();
}

const LINK = /\]\(([^)\s]+)\)/g;

/** The absolute URL of repository path `path` (a file or a folder) at tag v`version`. */
export function versionedUrl(path, { repository, version }, root = ROOT) {
  const [file, anchor] = path.split("#");
  const clean = file.replace(/\/$/, "");
  const kind = existsSync(join(root, clean)) && statSync(join(root, clean)).isDirectory() ? "tree" : "blob";
  return `${repository}/${kind}/v${version}/${clean}${anchor ? `#${anchor}` : ""}`;
}

/**
 * Each link of markdown file `file` (a repository path) that breaks the rule, with the link it
 * should be: a relative link into the repository from README.md or to a file the package lacks,
 * or an absolute link at another version or to a path that does not exist.
 */
export function brokenLinks(file, text, root = ROOT) {
  const info = manifest(root);
  const own = new RegExp(
    `^${info.repository.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}/(?:blob|tree)/([^/]+)/(.+)$`,
  );
  const broken = [];
  for (const match of text.matchAll(LINK)) {
    const link = match[1];
    if (link.startsWith("#") || (/^(mailto|https?):/.test(link) && !own.test(link))) continue;
    const absolute = own.exec(link);
    const path = absolute
      ? absolute[2]
      : posix.normalize(posix.join(posix.dirname(file), link.split("#")[0])) +
        (link.includes("#") ? `#${link.split("#")[1]}` : "");
    const target = path.split("#")[0];
    const expected = versionedUrl(path, info, root);
    if (!existsSync(join(root, target))) broken.push({ file, link, problem: `${target} does not exist` });
    else if (absolute && link !== expected)
      broken.push({ file, link, expected, problem: "not at this version" });
    else if (!absolute && (file === "README.md" || !shipped(target, info.files)))
      broken.push({
        file,
        link,
        expected,
        problem: file === "README.md" ? "relative link in the README" : `${target} is not in the package`,
      });
  }
  return broken;
}

/** `text` with every fixable link of `file` replaced by the one the rule expects. */
export function fixLinks(file, text, root = ROOT) {
  let fixed = text;
  for (const { link, expected } of brokenLinks(file, text, root))
    if (expected) fixed = fixed.split(`](${link})`).join(`](${expected})`);
  return fixed;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const check = process.argv.includes("--check");
  let left = 0;
  for (const file of shippedMarkdown()) {
    const path = join(ROOT, file);
    const text = readFileSync(path, "utf8");
    if (!check) {
      const fixed = fixLinks(file, text);
      if (fixed !== text) writeFileSync(path, fixed);
    }
    for (const broken of brokenLinks(file, check ? text : readFileSync(path, "utf8"))) {
      left++;
      console.error(`${file}: ${broken.link}: ${broken.problem}`);
    }
  }
  process.exit(left > 0 ? 1 : 0);
}
