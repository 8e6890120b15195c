/**
 * The URL check of packaging 23.0's Requirement, on the urllib.parse of CPython 3.11
 * (Debian bookworm's /usr/bin/python3, CI's reference): urlsplit's scheme and netloc, its
 * ValueErrors (unbalanced brackets, a bracketed host that is no IPv6 address, a netloc that NFKC
 * turns into URL syntax), and urlunsplit for the `file:` round trip.
 */

interface SplitUrl {
  scheme: string;
  netloc: string;
  path: string;
  query: string;
  fragment: string;
}

class UrlValueError extends Error {}

const USES_NETLOC = new Set([
  "",
  "ftp",
  "http",
  "gopher",
  "nntp",
  "telnet",
  "imap",
  "wais",
  "file",
  "mms",
  "https",
  "shttp",
  "snews",
  "prospero",
  "rtsp",
  "rtspu",
  "rsync",
  "svn",
  "svn+ssh",
  "sftp",
  "nfs",
  "git",
  "git+ssh",
  "ws",
  "wss",
]);

/** Python's "a.partition(sep)". */
function partition(text: string, sep: string): [string, boolean, string] {
  const at = text.indexOf(sep);
  return at < 0 ? [text, false, ""] : [text.slice(0, at), true, text.slice(at + sep.length)];
}

function ipv4Valid(text: string): boolean {
  const octets = text.split(".");
  return (
    octets.length === 4 &&
    octets.every((o) => /^[0-9]{1,3}$/.test(o) && (o === "0" || o[0] !== "0") && Number(o) <= 255)
  );
}

/** ipaddress.IPv6Address's parse (scope id, embedded IPv4, one "::"). */
function ipv6Valid(address: string): boolean {
  const [ip, hasScope, scope] = partition(address, "%");
  if (hasScope && (scope === "" || scope.includes("%"))) return false;
  const parts = ip.split(":");
  if (ip === "" || parts.length < 3) return false;
  if ((parts[parts.length - 1] as string).includes(".")) {
    if (!ipv4Valid(parts.pop() as string)) return false;
    parts.push("0", "0");
  }
  if (parts.length > 9) return false;
  let skip: number | null = null;
  for (let i = 1; i < parts.length - 1; i++) {
    if (parts[i] !== "") continue;
    if (skip !== null) return false;
    skip = i;
  }
  let hi = parts.length;
  let lo = 0;
  if (skip !== null) {
    hi = skip;
    lo = parts.length - skip - 1;
    // A leading or trailing empty part is only allowed as half of "::".
    if (parts[0] === "" && --hi !== 0) return false;
    if (parts[parts.length - 1] === "" && --lo !== 0) return false;
    if (8 - (hi + lo) < 1) return false;
  } else if (parts.length !== 8 || parts[0] === "" || parts[parts.length - 1] === "") return false;
  const hextets = [...parts.slice(0, hi), ...parts.slice(parts.length - lo, parts.length)];
  return hextets.every((h) => /^[0-9a-fA-F]{1,4}$/.test(h));
}

/** urllib.parse._check_bracketed_netloc: what is in brackets must be an IPv6 address or an IPvFuture. */
function checkBracketedNetloc(netloc: string): void {
  const hostAndPort = netloc.slice(netloc.lastIndexOf("@") + 1);
  const [before, opened, bracketed] = partition(hostAndPort, "[");
  let hostname: string;
  if (opened) {
    if (before) throw new UrlValueError("Invalid IPv6 URL");
    const [host, , port] = partition(bracketed, "]");
    if (port && !port.startsWith(":")) throw new UrlValueError("Invalid IPv6 URL");
    hostname = host;
  } else hostname = partition(hostAndPort, ":")[0];
  if (hostname.startsWith("v")) {
    if (!/^v[a-fA-F0-9]+\.[^\n]+$/.test(hostname)) throw new UrlValueError("IPvFuture address is invalid");
  } else if (ipv4Valid(hostname)) throw new UrlValueError("An IPv4 address cannot be in brackets");
  else if (!ipv6Valid(hostname))
    throw new UrlValueError(`'${hostname}' does not appear to be an IPv4 or IPv6 address`);
}

/** urllib.parse._checknetloc: a netloc NFKC turns into URL syntax is refused. */
function checkNetloc(netloc: string): void {
  // eslint-disable-next-line no-control-regex -- str.isascii(): U+0000 to U+007F
  if (netloc === "" || /^[\x00-\x7f]*$/.test(netloc)) return;
  const n = netloc.replace(/[@:#?]/g, "");
  const normalised = n.normalize("NFKC");
  if (n === normalised) return;
  if (/[/?#@:]/.test(normalised))
    throw new UrlValueError(`netloc '${netloc}' contains invalid characters under NFKC normalization`);
}

function urlsplit(text: string): SplitUrl {
  // WHATWG's C0 control or space is stripped in front, tabs and line breaks anywhere.
  // eslint-disable-next-line no-control-regex -- the C0 controls are what is stripped
  let url = text.replace(/^[\x00-\x20]+/, "").replace(/[\t\r\n]/g, "");
  let scheme = "";
  let netloc = "";
  let query = "";
  let fragment = "";
  const colon = url.indexOf(":");
  if (colon > 0 && /^[a-zA-Z]/.test(url) && /^[a-zA-Z0-9+\-.]+$/.test(url.slice(0, colon))) {
    scheme = url.slice(0, colon).toLowerCase();
    url = url.slice(colon + 1);
  }
  if (url.startsWith("//")) {
    const ends = ["/", "?", "#"].map((c) => url.indexOf(c, 2)).filter((i) => i >= 0);
    const end = ends.length > 0 ? Math.min(...ends) : url.length;
    netloc = url.slice(2, end);
    url = url.slice(end);
    if (netloc.includes("[") !== netloc.includes("]")) throw new UrlValueError("Invalid IPv6 URL");
    if (netloc.includes("[")) checkBracketedNetloc(netloc);
  }
  if (url.includes("#")) [url, , fragment] = partition(url, "#");
  if (url.includes("?")) [url, , query] = partition(url, "?");
  checkNetloc(netloc);
  return { scheme, netloc, path: url, query, fragment };
}

function urlunsplit({ scheme, netloc, path, query, fragment }: SplitUrl): string {
  let url = path;
  if (netloc || (scheme && USES_NETLOC.has(scheme) && !url.startsWith("//"))) {
    if (url && !url.startsWith("/")) url = `/${url}`;
    url = `//${netloc}${url}`;
  }
  if (scheme) url = `${scheme}:${url}`;
  if (query) url += `?${query}`;
  if (fragment) url += `#${fragment}`;
  return url;
}

/** Why packaging refuses this requirement URL, or null when it takes it. */
export function urlError(url: string): string | null {
  let parts: SplitUrl;
  try {
    parts = urlsplit(url);
  } catch (error) {
    if (error instanceof UrlValueError) return error.message;
    throw error;
  }
  // urlparse splits ;params off the path only for schemes in uses_params, and urlunparse puts
  // them back: for file: (not one of them) the round trip is urlunsplit's alone.
  if (parts.scheme === "file") return urlunsplit(parts) === url ? null : "Invalid URL given";
  return parts.scheme && parts.netloc ? null : `Invalid URL: ${url}`;
}
