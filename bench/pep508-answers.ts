/**
 * The PEP 508 half of the differential corpus (bench/pep440-corpus.ts): requirement strings and
 * markers from a seeded generator, the environments markers are judged in, and src/util's answers
 * in bench/pep440_reference.py's format.
 */
import type { Random } from "./pep440-corpus.js";
import { Marker, parseMarker } from "../src/util/pep508-marker.js";
import { isInvalidRequirement, parseRequirement } from "../src/util/pep508-requirement.js";

/** Full environments (every variable packaging's default environment has, and extra). */
export const ENVIRONMENTS: readonly Record<string, string>[] = [
  env("linux", "x86_64", "3.12", "3.12.3", "6.8.0-45-generic", "cu128"),
  env("linux", "aarch64", "3.11", "3.11.2", "6.1.0-13-arm64", ""),
  env("darwin", "arm64", "3.9", "3.9.6", "23.6.0", "Dev_Tools"),
  env("win32", "AMD64", "3.13", "3.13.0rc1", "10", "gpu"),
  env("linux", "x86_64", "3.10", "3.10.12", "5.15.0", "cuda.12"),
];

function env(
  sys: string,
  machine: string,
  py: string,
  full: string,
  release: string,
  extra: string,
): Record<string, string> {
  const system = sys === "linux" ? "Linux" : sys === "darwin" ? "Darwin" : "Windows";
  return {
    implementation_name: "cpython",
    implementation_version: full,
    os_name: sys === "win32" ? "nt" : "posix",
    platform_machine: machine,
    platform_release: release,
    platform_system: system,
    platform_version: `#1 SMP ${system}`,
    python_full_version: full,
    platform_python_implementation: "CPython",
    python_version: py,
    sys_platform: sys,
    extra,
  };
}

const VARIABLES: readonly (readonly [string, readonly string[]])[] = [
  ["python_version", ["3.8", "3.9", "3.10", "3.11", "3.12", "3.13", "3", "3.10.*", "3.1", "4"]],
  ["python_full_version", ["3.12.3", "3.13.0rc1", "3.11", "3.9.6", "3.13.0"]],
  ["sys_platform", ["linux", "darwin", "win32", "linux2", "cygwin", "lin"]],
  ["sys.platform", ["linux", "win32"]],
  ["platform_machine", ["x86_64", "aarch64", "arm64", "AMD64", "x86", "ppc64le"]],
  ["platform.machine", ["x86_64", "aarch64"]],
  ["platform_system", ["Linux", "Darwin", "Windows", "linux"]],
  ["platform_release", ["5.10", "6.8.0-45-generic", "6", "23.6.0"]],
  ["platform_version", ["#1 SMP Linux", "1"]],
  ["platform.version", ["#1 SMP Linux"]],
  ["os_name", ["posix", "nt", "java"]],
  ["os.name", ["posix", "nt"]],
  ["platform_python_implementation", ["CPython", "PyPy"]],
  ["platform.python_implementation", ["CPython"]],
  ["python_implementation", ["CPython", "PyPy"]],
  ["implementation_name", ["cpython", "pypy"]],
  ["implementation_version", ["3.12.3", "3.9", "3.13.0rc1"]],
  ["extra", ["cu128", "CU128", "dev_tools", "Dev.Tools", "gpu", "", "cuda.12", "cuda-12"]],
];
/** Not marker variables: packaging refuses them. */
const NOT_VARIABLES = ["platform.release", "python_versionx", "os_names", "Python_version"];

const MARKER_OPS = [
  "==",
  "!=",
  "<",
  "<=",
  ">",
  ">=",
  "~=",
  "===",
  "in",
  "not in",
  "not  in",
  "notin",
  "=",
  "<>",
];

function quoted(rng: Random, value: string): string {
  const kind = rng.next();
  if (kind < 0.45) return `"${value}"`;
  if (kind < 0.95) return `'${value}'`;
  return rng.pick([
    `'${value}\\x41'`,
    `"${value}\\n"`,
    `'\\'${value}'`,
    `"\\u00e9${value}"`,
    `'${value}\\q'`,
    `"${value}\\"`,
    `'\\101'`,
  ]);
}

function markerItem(rng: Random): string {
  const [known, values] = rng.pick(VARIABLES);
  const variable = rng.chance(0.02) ? rng.pick(NOT_VARIABLES) : known;
  const op = rng.weighted<string>([
    [80, rng.pick(["==", "!=", "<", "<=", ">", ">="])],
    [20, rng.pick(["in", "not in"])],
    [3, rng.pick(MARKER_OPS)],
  ]);
  const value = rng.chance(0.9)
    ? rng.pick(values)
    : rng.pick(["", " 3.8", "3.8 ", "a b", "x)", "1.0.*", "1.0+local"]);
  const space = () => rng.pick([" ", " ", " ", " ", " ", "", "  ", "\t"]);
  const kind = rng.next();
  if (kind < 0.8) return `${variable}${space()}${op}${space()}${quoted(rng, value)}`;
  if (kind < 0.9) return `${quoted(rng, value)}${space()}${op}${space()}${variable}`;
  if (kind < 0.95) return `${quoted(rng, value)} ${op} ${quoted(rng, rng.pick(values))}`;
  return `${variable} ${op} ${rng.pick(VARIABLES)[0]}`;
}

/** A marker of 1 to 4 comparisons joined by and/or, with parentheses, and sometimes broken. */
export function marker(rng: Random, depth = 0): string {
  const count = 1 + rng.int(depth > 1 ? 2 : 4);
  let text = "";
  for (let i = 0; i < count; i++) {
    if (i > 0)
      text += rng.pick([" and ", " or ", " and ", " or ", "and ", " or(", "  and\t", " and ", " or "]);
    const atom = rng.chance(depth < 3 ? 0.2 : 0) ? `(${marker(rng, depth + 1)})` : markerItem(rng);
    text += text.endsWith("(") ? `${atom})` : atom;
  }
  if (depth === 0 && rng.chance(0.04))
    text += rng.pick([" garbage", ")", " and", "(", " ;", "\n", " and extra == 'x'"]);
  if (depth === 0 && rng.chance(0.03)) text = rng.pick([" ", "(", "", "\t"]) + text;
  return text;
}

const NAMES = [
  "torch",
  "Torch_Vision",
  "torchvision",
  "numpy",
  "flash-attn",
  "flash_attn",
  "zope.interface",
  "a",
  "A1",
  "nvidia-cudnn-cu12",
  "triton",
  "vllm",
  "xformers",
  "bitsandbytes",
  "1numpy",
  "my..pkg",
];
const ODD_NAMES = ["pkg-", "-pkg", "pkg.", "na\u00efve", "pkg_", "_pkg", "p\u00e9", "\u00e9p"];
const EXTRAS = ["cuda", "dev", "Dev_Tools", "all", "cu128", "test-extra", "x.y", "cuda", "dev", "", "-bad"];
const URLS = [
  "https://download.pytorch.org/whl/cu128/torch-2.8.0%2Bcu128-cp312-cp312-manylinux_2_28_x86_64.whl",
  "git+https://github.com/pytorch/vision@v0.22.1#egg=torchvision",
  "file:///tmp/wheels/torch-2.8.0-cp312-cp312-linux_x86_64.whl",
  "file://localhost/tmp/x.whl",
  "file:/tmp/x.whl",
  "file:relative/x.whl",
  "FILE:///tmp/x.whl",
  "file:///tmp/x.whl#",
  "file:///tmp/x.whl?",
  "file:///tmp/x.whl#sha256=abc",
  "./local/pkg",
  "/abs/pkg",
  "https://",
  "https:///path",
  "http://[::1]/pkg.whl",
  "http://[::1/pkg.whl",
  "http://[1.2.3.4]/pkg.whl",
  "http://[fe80::1%25eth0]:8080/x",
  "http://[v1.fe]/x",
  "http://user@[::ffff:1.2.3.4]:80/x",
  "http://ex\u2100ample.com/x",
  "ssh://git@github.com/a/b.git",
  "git+ssh://git@github.com:a/b.git",
  "https://example.com/a;b?c#d",
];

function requirementText(rng: Random, specifierSet: () => string): string {
  let text = rng.pick(["", "", "", " ", "\t"]) + (rng.chance(0.05) ? rng.pick(ODD_NAMES) : rng.pick(NAMES));
  if (rng.chance(0.2)) {
    const extras = Array.from({ length: 1 + rng.int(3) }, () => rng.pick(EXTRAS));
    text +=
      rng.pick(["", " "]) +
      `[${rng.pick(["", " "])}${extras.join(rng.pick([",", ", ", " ,", " "]))}${rng.pick(["", " "])}]`;
  }
  const kind = rng.next();
  if (kind < 0.15) {
    text += rng.pick([" @ ", "@ ", " @", "@", " @  "]) + rng.pick(URLS);
    text += rng.pick(["", "", " ", "\t"]);
  } else if (kind < 0.9) {
    const specifier = specifierSet();
    text += rng.chance(0.1) ? ` (${specifier})` : rng.pick(["", " ", "  "]) + specifier;
  }
  if (rng.chance(0.35)) text += rng.pick([";", "; ", " ; ", " ;"]) + marker(rng);
  else if (rng.chance(0.03)) text += rng.pick([" garbage", "\n", "\n\n", ",", " ;"]);
  return text;
}

/** A requirement string: a name, maybe extras, a specifier set or a URL, maybe a marker. */
export function requirement(rng: Random, specifierSet: () => string): string {
  return requirementText(rng, specifierSet);
}

/** src/util's answer to {"k": "r"}: "E" or [name, extras, specifier, url, marker, str]. */
export function answerRequirement(text: string): unknown {
  const r = parseRequirement(text);
  if (isInvalidRequirement(r)) return "E";
  return [
    r.name,
    [...r.extras],
    r.specifier.toString(),
    r.url,
    r.marker ? r.marker.toString() : null,
    r.toString(),
  ];
}

/** src/util's answer to {"k": "m"}: "E" or [str(marker), evaluate(env) or "E"]. */
export function answerMarker(text: string, environment: Record<string, string>): unknown {
  const m = parseMarker(text);
  if (!(m instanceof Marker)) return "E";
  const verdict = m.evaluate(environment);
  return [m.toString(), verdict ?? "E"];
}
