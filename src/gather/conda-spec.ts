/**
 * Conda MatchSpecs as environment.yml and pixi write them, split into name, channel, version and
 * build: "conda-forge::pytorch=2.5.1=*cuda*", "pytorch 2.5.1 cuda126*", "pytorch>=2.4,<3",
 * "pytorch[version='>=2.4',build='*cuda*']". Conda's version rules, as its docs give them
 * (https://docs.conda.io/projects/conda/en/stable/user-guide/concepts/pkg-specs.html): `=1.11`
 * is fuzzy (1.11.*), `==1.11` and a bare `1.11` after a space are exact.
 */

interface CondaSpecParts {
  name: string;
  channel: string | null;
  /** Normalised version spec: "==2.5.1", "2.5.*", ">=2.4,<3"; "" when any version. */
  version: string;
  build: string | null;
}

const NAME = /^([A-Za-z0-9_][A-Za-z0-9_.-]*)(.*)$/s;

/** A version as a spec written alone ("2.5.1" -> "==2.5.1", "2.5.*" stays, "*" -> ""). */
export function normalizeCondaVersion(text: string): string {
  const version = text.trim();
  if (version === "" || version === "*") return "";
  if (/^[<>=!~]/.test(version) || /[,|*]/.test(version)) {
    // "=2.5" (conda's fuzzy equal) means 2.5.*
    return version.replace(
      /(^|[,|])\s*=(?!=)\s*([^,|]+)/g,
      (_m, lead: string, v: string) => `${lead}${v.trim()}.*`,
    );
  }
  return `==${version}`;
}

/** Returns null when `raw` is not a MatchSpec (the caller names file and line). */
export function parseCondaSpec(raw: string): CondaSpecParts | null {
  let text = raw.trim();
  let channel: string | null = null;
  const channelSplit = text.indexOf("::");
  if (channelSplit > 0) {
    channel = text.slice(0, channelSplit).trim();
    text = text.slice(channelSplit + 2).trim();
  }
  const match = NAME.exec(text);
  if (!match) return null;
  const name = match[1] ?? "";
  let rest = (match[2] ?? "").trim();
  let bracketVersion: string | null = null;
  let bracketBuild: string | null = null;
  const bracket = /^\[(.*)\]\s*(.*)$/s.exec(rest);
  if (bracket) {
    for (const pair of (bracket[1] ?? "").split(/,(?=\s*[a-z_]+\s*=)/)) {
      const kv = /^\s*([a-z_]+)\s*=\s*["']?(.*?)["']?\s*$/.exec(pair);
      if (!kv) continue;
      if (kv[1] === "version") bracketVersion = kv[2] ?? "";
      else if (kv[1] === "build") bracketBuild = kv[2] ?? "";
      else if (kv[1] === "channel") channel = kv[2] ?? channel;
    }
    rest = (bracket[2] ?? "").trim();
  }
  let version = "";
  let build: string | null = null;
  if (rest.startsWith("=") && !rest.startsWith("==")) {
    // name=version[=build]
    const [v = "", b] = rest.slice(1).split("=");
    version = v.includes("*") || v === "" ? v.trim() : `${v.trim()}.*`;
    build = b?.trim() || null;
  } else if (/^\s*[<>!~=]/.test(rest)) {
    // name>=1.2,<2 ... possibly followed by " build"
    const [v = "", b] = rest.split(/\s+/);
    version = v;
    build = b ?? null;
  } else if (rest !== "") {
    // "name 2.5.1 cuda126*"
    const [v = "", b] = rest.split(/\s+/);
    version = normalizeCondaVersion(v);
    build = b ?? null;
  }
  if (bracketVersion !== null) version = normalizeCondaVersion(bracketVersion);
  if (bracketBuild !== null) build = bracketBuild;
  if (version === "*") version = "";
  return { name, channel, version, build };
}
