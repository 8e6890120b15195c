// The parts the diagnosis benchmark builds its broken environments from, all real: venvs made by
// Debian's python3, .dist-info directories as pip writes them, C extensions compiled with gcc,
// CUDA binaries compiled with nvcc, project directories with real manifests.
import { execFileSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

/** Debian's python3 with python3-torch 1.13 (CPU) and python3-numpy 1.24. */
export const DEBIAN_PYTHON = "/usr/bin/python3";
export const ROOT = fileURLToPath(new URL("../../", import.meta.url));
export const SOURCES = fileURLToPath(new URL("./sources/", import.meta.url));
export const BUILDERS = join(ROOT, "test/fixtures/builders");
/** Debian's NumPy 1.24 C headers (python3-numpy), for modules compiled against NumPy 1.x. */
export const NUMPY1_INCLUDE = "/usr/lib/python3/dist-packages/numpy/core/include";

export function sh(command, args, options = {}) {
  return execFileSync(command, args, { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"], ...options });
}

/** Python's X.Y, the include directory and the extension suffix, asked once per interpreter. */
const pythonInfo = new Map();
export function pythonConfig(python) {
  if (!pythonInfo.has(python)) {
    const out = sh(python, [
      "-c",
      "import sys, sysconfig, json; print(json.dumps(['%d.%d' % sys.version_info[:2], sysconfig.get_paths()['include'], sysconfig.get_config_var('EXT_SUFFIX')]))",
    ]);
    const [version, include, suffix] = JSON.parse(out);
    pythonInfo.set(python, { version, include, suffix });
  }
  return pythonInfo.get(python);
}

/** A venv without pip from Debian's python3; returns its python and site-packages. */
export function makeVenv(dir, { systemSite = false } = {}) {
  sh(DEBIAN_PYTHON, ["-m", "venv", "--without-pip", ...(systemSite ? ["--system-site-packages"] : []), dir]);
  const { version } = pythonConfig(DEBIAN_PYTHON);
  return { python: join(dir, "bin", "python"), site: join(dir, "lib", `python${version}`, "site-packages") };
}

/** What pip writes for a distribution: NAME-VERSION.dist-info with METADATA (Requires-Dist lines too). */
export function writeDistInfo(site, name, version, { requires = [], installer = "pip" } = {}) {
  const info = join(site, `${name.replace(/-/g, "_")}-${version}.dist-info`);
  mkdirSync(info, { recursive: true });
  const headers = [`Metadata-Version: 2.1`, `Name: ${name}`, `Version: ${version}`];
  for (const requirement of requires) headers.push(`Requires-Dist: ${requirement}`);
  writeFileSync(join(info, "METADATA"), headers.join("\n") + "\n\n");
  writeFileSync(join(info, "INSTALLER"), `${installer}\n`);
  writeFileSync(join(info, "RECORD"), "");
  return info;
}

export function writeFiles(dir, files) {
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), content);
  }
}

/** A Python extension module compiled with gcc against the interpreter's headers. */
export function gccExtension(python, source, outDir, moduleName, extra = []) {
  const { include, suffix } = pythonConfig(python);
  mkdirSync(outDir, { recursive: true });
  const out = join(outDir, moduleName + suffix);
  sh("gcc", ["-shared", "-fPIC", `-I${include}`, "-o", out, source, ...extra]);
  return out;
}

/**
 * A stub libcudart.so.12 to link against, in its own directory that is never installed: what is
 * built against it needs a CUDA 12 runtime that this environment lacks.
 */
export function cudart12Stub(work) {
  const dir = join(work, "link-only-cudart12");
  mkdirSync(dir, { recursive: true });
  sh("gcc", [
    "-shared",
    "-fPIC",
    "-Wl,-soname,libcudart.so.12",
    "-o",
    join(dir, "libcudart.so.12"),
    join(SOURCES, "cudart_stub.c"),
  ]);
  return ["-Wl,--no-as-needed", `-L${dir}`, "-l:libcudart.so.12"];
}

/** A shared library holding CUDA code for exactly the given -gencode targets (nvcc, no GPU needed). */
export function nvccLibrary(out, gencodes) {
  mkdirSync(dirname(out), { recursive: true });
  const flags = gencodes.flatMap((g) => ["-gencode", g]);
  sh("nvcc", ["-shared", "-Xcompiler", "-fPIC", ...flags, "-o", out, join(SOURCES, "kernel.cu")]);
  return out;
}

/** The wheel files of the machine's local package mirror (pip's configured extra indexes). */
export const WHEEL_DIRS = ["/opt/pypi/files", "/opt/pypi-more/files", "/opt/wheels"];

/**
 * Installs wheel files into a venv's site-packages, offline (--no-index: the machine has no network,
 * and pip would spend seconds retrying PyPI). The venvs have no pip of their own, so the pyenv
 * python3's pip installs them with --target (same CPython 3.11 ABI as Debian's).
 */
export function installWheels(python, wheels) {
  sh("python3", [
    "-m",
    "pip",
    "install",
    "-q",
    "--no-index",
    "--no-deps",
    "--target",
    sitePackagesOf(python),
    ...wheels,
  ]);
}

export function sitePackagesOf(python) {
  return sh(python, ["-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"]).trim();
}
