/**
 * Knowledge-base sources as a reader meets them: what each is (a vendor page, a repository file at
 * a commit, a pull request, a user's report, gpuprep's own notes) beside a link that works where
 * gpuprep is installed. The tables cite gpuprep's own pages by their path in the repository
 * ("docs/kb-evidence/gpus.md"), which npm does not ship: the loader turns each into the page at
 * this release's tag (docsUrl), so every printed source is an absolute URL, and the label below
 * says what is behind it.
 */
import { docsUrl } from "../docs-url.js";

/** A path of this repository as the tables write it: "docs/kb-evidence/gpus.md". */
const REPOSITORY_DOC = /^docs\/[\w./-]+\.md(#[\w-]+)?$/;

/** Whether `url` is one of gpuprep's own pages written as a repository path. */
export function isRepositoryDoc(url: string): boolean {
  return REPOSITORY_DOC.test(url);
}

/** The absolute link for a source as a table writes it: own pages at this release's tag. */
export function sourceUrl(url: string): string {
  return isRepositoryDoc(url) ? docsUrl(url) : url;
}

const OWN_PAGES: readonly (readonly [RegExp, (match: RegExpExecArray) => string])[] = [
  [/^docs\/kb-evidence\//, () => "gpuprep's evidence notes"],
  [/^docs\/user-reports\/(\d{4}-\d{2}-\d{2})/, (m) => `a user's report given to gpuprep on ${m[1]}`],
  [/^docs\/measurements\/(\d{4}-\d{2}-\d{2})/, (m) => `gpuprep's own measurement of ${m[1]}`],
  [/^docs\//, () => "gpuprep's documentation"],
];

const VENDORS: readonly (readonly [RegExp, string])[] = [
  [/(^|\.)nvidia\.com$/, "NVIDIA page"],
  [/^download\.pytorch\.org$/, "PyTorch wheel index"],
  [/^dev-discuss\.pytorch\.org$/, "PyTorch developers' forum"],
  [/(^|\.)pytorch\.org$/, "PyTorch page"],
  [/^pypi\.org$/, "PyPI page"],
  [/(^|\.)amazon\.com$/, "AWS page"],
];

const GITHUB_PAGES: readonly (readonly [RegExp, string])[] = [
  [/^\/[^/]+\/[^/]+\/(?:blob|tree|raw)\/[0-9a-f]{7,40}\//, "repository file at a commit"],
  [/^\/[^/]+\/[^/]+\/(?:blob|tree|raw)\/v?\d+(\.\d+)+\//, "repository file at a release tag"],
  [/^\/[^/]+\/[^/]+\/(?:blob|tree|raw)\//, "repository file on a branch (not pinned to a commit)"],
  [/^\/[^/]+\/[^/]+\/pull\/\d+/, "pull request"],
  [/^\/[^/]+\/[^/]+\/issues\/\d+/, "issue"],
  [/^\/[^/]+\/[^/]+\/discussions\/\d+/, "discussion"],
  [/^\/[^/]+\/[^/]+\/commit\/[0-9a-f]{7,40}/, "commit"],
  [/^\/[^/]+\/[^/]+\/releases\/tag\//, "release notes"],
];

/** What a github.com page is: the URL names the repository, this says what kind of page. */
function githubKind(path: string): string {
  return GITHUB_PAGES.find(([pattern]) => pattern.test(path))?.[1] ?? "GitHub page";
}

/** The gpuprep repository path behind a link at this release's tag, or null for any other link. */
function ownPath(url: string): string | null {
  if (isRepositoryDoc(url)) return url;
  const prefix = docsUrl("");
  return url.startsWith(prefix) ? url.slice(prefix.length) : null;
}

/** What the source at `url` is, in a few words ("NVIDIA page", "pull request", "gpuprep's own measurement of 2026-11-22"). */
export function sourceKind(url: string): string {
  const own = ownPath(url);
  if (own !== null) {
    for (const [pattern, kind] of OWN_PAGES) {
      const match = pattern.exec(own);
      if (match) return kind(match);
    }
  }
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return "source";
  }
  const host = parsed.hostname;
  if (host === "github.com") return githubKind(parsed.pathname);
  const merge = /\/-\/merge_requests\/\d+/.exec(parsed.pathname);
  if (merge) return "merge request";
  const vendor = VENDORS.find(([pattern]) => pattern.test(host));
  return vendor ? vendor[1] : "third-party page";
}

/** One source as text prints it: "NVIDIA page, https://docs.nvidia.com/…". */
export function sourceText(url: string): string {
  return `${sourceKind(url)}, ${sourceUrl(url)}`;
}
