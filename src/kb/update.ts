/**
 * `gpuprep kb update`: read the PyTorch wheel index (simple repository API: PEP 691 JSON, or
 * PEP 503 HTML) and record which torch builds exist per release, variant, platform and Python.
 * File names carry no arch list, so new builds enter the overlay with an empty one and queries
 * never recommend them on a guess.
 */
import { UserError, errorMessage } from "../errors.js";
import { printablePrefix } from "../util/safe-read.js";
import { describeJsonError } from "../util/json-input.js";
import type { TorchBuildRow } from "./types.js";
import type { Overlay } from "./overlay.js";

export const DEFAULT_INDEX_URL = "https://download.pytorch.org/whl";

interface WheelFile {
  torch: string;
  variant: string;
  python: string;
  platform: TorchBuildRow["platform"];
}

/** torch-2.11.0+cu130-cp312-cp312-manylinux_2_28_x86_64.whl -> its parts; null for other files. */
export function parseWheelName(filename: string): WheelFile | null {
  let name: string;
  try {
    name = decodeURIComponent(filename.split("#")[0]!.split("/").pop() ?? "");
  } catch {
    return null; // a malformed %-escape (URIError) is no wheel name
  }
  const match = /^torch-(\d+\.\d+)\.\d+(?:[a-z]+\d*)?\+(cu\d{3}|cpu)-cp(\d)(\d+)-cp\d+(t?)-(.+)\.whl$/.exec(
    name,
  );
  if (!match) return null;
  const [, torch, variant, major, minor, threaded, platformTag] = match as unknown as string[];
  const platform = /aarch64/.test(platformTag!)
    ? "linux-aarch64"
    : /x86_64/.test(platformTag!)
      ? "linux-x86_64"
      : null;
  if (!platform || !/linux/.test(platformTag!)) return null;
  return { torch: torch!, variant: variant!, python: `${major}.${minor}${threaded}`, platform };
}

/** File names from a PEP 691 JSON page or a PEP 503 HTML page. */
export function filesFromIndexPage(body: string, contentType: string): string[] {
  if (
    contentType.includes("application/vnd.pypi.simple.v1+json") ||
    contentType.includes("application/json")
  ) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(body);
    } catch (error) {
      throw new UserError(
        `the index page is not valid JSON (${describeJsonError(error, body)})`,
        "pass --index-url with the base of a PyTorch wheel index (…/whl)",
      );
    }
    const files = (parsed as { files?: unknown } | null)?.files;
    if (!Array.isArray(files))
      throw new UserError(
        "the index page has no files list (PEP 691)",
        "pass --index-url with the base of a PyTorch wheel index (…/whl)",
      );
    return files
      .map((file) => (file as { filename?: unknown } | null)?.filename)
      .filter((name): name is string => typeof name === "string" && name !== "");
  }
  // `[^<>]*`, not `[^>]*`: an attribute run stops at the next "<", so "<a<a<a…" without a ">"
  // costs one pass instead of one pass per "<a" (quadratic; issue 12).
  const names: string[] = [];
  for (const match of body.matchAll(/<a\b[^<>]*>([^<]+)<\/a>/gi)) names.push(match[1]!.trim());
  return names;
}

/** Group wheel files into torch-build rows (one per release x variant x platform). */
function buildsFromFiles(files: string[], indexUrl: string, pageUrl: string): TorchBuildRow[] {
  const rows = new Map<string, TorchBuildRow>();
  for (const file of files) {
    const wheel = parseWheelName(file);
    if (!wheel || wheel.variant === "cpu") continue;
    const key = `${wheel.torch}|${wheel.variant}|${wheel.platform}`;
    let row = rows.get(key);
    if (!row) {
      row = {
        torch: wheel.torch,
        variant: wheel.variant,
        platform: wheel.platform,
        cuda: `${wheel.variant.slice(2, 4)}.${wheel.variant.slice(4)}`,
        archList: [],
        pythons: [],
        numpyBuildMajor: null,
        indexUrl: `${indexUrl.replace(/\/+$/, "")}/${wheel.variant}`,
        pypiDefault: false,
        confidence: "index",
        sources: [{ url: pageUrl, note: "wheel file names on the PyTorch index (gpuprep kb update)" }],
      };
      rows.set(key, row);
    }
    if (!row.pythons.includes(wheel.python)) row.pythons.push(wheel.python);
  }
  for (const row of rows.values())
    row.pythons.sort((a, b) => Number(a.slice(2).replace("t", ".5")) - Number(b.slice(2).replace("t", ".5")));
  return [...rows.values()];
}

/**
 * download.pytorch.org/whl/torch/ is about 2 MB of HTML (PEP 691 JSON a few times that); a body
 * past 64 MiB is not an index page, and reading stops there instead of filling memory.
 */
const MAX_INDEX_BODY_BYTES = 64 * 1024 * 1024;

async function readCappedBody(
  response: Response,
  pageUrl: string,
  maxBytes: number = MAX_INDEX_BODY_BYTES,
): Promise<string> {
  const tooLarge = () =>
    new UserError(
      `${pageUrl} sent more than ${Math.round(maxBytes / 1024 / 1024)} MiB, more than any index page`,
      "pass --index-url with the base of a PyTorch wheel index (…/whl)",
    );
  const declared = Number(response.headers.get("content-length") ?? "");
  if (Number.isFinite(declared) && declared > maxBytes) {
    await response.body?.cancel().catch(() => undefined);
    throw tooLarge();
  }
  if (!response.body) return "";
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      total += value.byteLength;
      if (total > maxBytes) {
        await reader.cancel().catch(() => undefined);
        throw tooLarge();
      }
      chunks.push(value);
    }
  } catch (error) {
    if (error instanceof UserError) throw error;
    throw new UserError(
      `reading ${pageUrl} failed: ${printablePrefix(errorMessage(error), 120)}`,
      "check the network, or pass --index-url with a mirror of the PyTorch index",
    );
  }
  return Buffer.concat(chunks, total).toString("utf8");
}

/** Fetch `<index>/torch/` (PEP 691 preferred) and turn it into an overlay. */
export async function fetchTorchIndex(
  indexUrl: string = DEFAULT_INDEX_URL,
  now: Date = new Date(),
): Promise<Overlay> {
  const pageUrl = `${indexUrl.replace(/\/+$/, "")}/torch/`;
  let response: Response;
  try {
    response = await fetch(pageUrl, {
      headers: { Accept: "application/vnd.pypi.simple.v1+json, text/html;q=0.1" },
      signal: AbortSignal.timeout(30_000),
    });
  } catch (error) {
    throw new UserError(
      `cannot reach ${pageUrl}: ${errorMessage(error)}`,
      "check the network, or pass --index-url with a mirror of the PyTorch index",
    );
  }
  if (!response.ok)
    throw new UserError(
      `${pageUrl} answered HTTP ${response.status}`,
      "pass --index-url with the base of a PyTorch wheel index (…/whl)",
    );
  const body = await readCappedBody(response, pageUrl);
  const files = filesFromIndexPage(body, response.headers.get("content-type") ?? "");
  const torchBuilds = buildsFromFiles(files, indexUrl, pageUrl);
  if (torchBuilds.length === 0)
    throw new UserError(
      `${pageUrl} lists no CUDA torch wheels for Linux`,
      "is --index-url the base of a PyTorch wheel index (…/whl)?",
    );
  return { format: 1, fetchedAt: now.toISOString(), indexUrl, torchBuilds };
}
