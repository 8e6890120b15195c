/**
 * What a test needs from the machine besides node_modules, and what happens when it is missing.
 *
 * .ci/run installs every part CI can have (its APT_PACKAGES), so on CI (CI=true) a missing part is
 * a broken machine and the test FAILS, its message naming the package to install. On a
 * developer's machine the same message skips the test, so the rest of the suite still runs.
 *
 * A few parts no CI machine can have, because no Debian package brings them (NVIDIA's CUDA 13 nvcc,
 * a torch >= 2.5, a locally built image): tests that need them skip everywhere, saying so.
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";

export interface Part {
  /** What is missing, as the message says it: "python3-torch", "a Docker engine". */
  what: string;
  /** How to get it: "apt-get install python3-torch". */
  install: string;
  /** false for parts CI cannot have: those skip on CI too. */
  onCi: boolean;
  /** How the message says it is missing; "is not installed" unless given. */
  absent?: string;
  present: () => boolean;
}

/** CI=true is how .ci/run runs (and GitHub Actions, and most CI services). */
export function onCi(): boolean {
  const ci = process.env["CI"];
  return ci !== undefined && ci !== "" && ci !== "0" && ci !== "false";
}

export function commandExists(name: string): boolean {
  return spawnSync("sh", ["-c", `command -v ${name}`], { stdio: "ignore" }).status === 0;
}

/** A part CI installs with apt-get (.ci/run's APT_PACKAGES). */
export function aptPart(what: string, packages: string, present: () => boolean): Part {
  return { what, install: `apt-get install ${packages}`, onCi: true, present };
}

/** Debian's CPU-only torch 1.13 for /usr/bin/python3 (and the numpy it imports). */
export const PYTHON3_TORCH = aptPart("python3-torch", "python3-torch python3-numpy", () =>
  existsSync("/usr/lib/python3/dist-packages/torch/__init__.py"),
);
export const CHROMIUM = aptPart("chromium", "chromium", () =>
  existsSync(process.env["CHROMIUM"] ?? "/usr/bin/chromium"),
);
export const SHELLCHECK = aptPart("shellcheck", "shellcheck", () => commandExists("shellcheck"));
/** The shells `gpuprep completion` writes for besides bash (test/cli/completion.test.ts). */
export const FISH = aptPart("fish", "fish", () => commandExists("fish"));
export const ZSH = aptPart("zsh", "zsh", () => commandExists("zsh"));
/** The distribution registry 2.8 (`docker-registry serve CONFIG`), no engine needed. */
export const DOCKER_REGISTRY = aptPart("docker-registry", "docker-registry", () =>
  commandExists("docker-registry"),
);
export const DOCKER_COMPOSE = aptPart("docker-compose", "docker-compose", () =>
  commandExists("docker-compose"),
);
export const ROOT: Part = {
  what: "root",
  absent: "is needed",
  install: "run the tests as root (CI does)",
  onCi: true,
  present: () => process.getuid?.() === 0,
};
/** An engine that answers `docker info` (docker.io installed and dockerd started). */
export const DOCKER_ENGINE: Part = {
  what: "a Docker engine",
  absent: "does not answer `docker info`",
  install: "apt-get install docker.io, then start dockerd (dockerd --iptables=false --bridge=none &)",
  onCi: true,
  present: () => spawnSync("docker", ["info"], { stdio: "ignore", timeout: 10_000 }).status === 0,
};
export const NVCC: Part = {
  what: "nvcc",
  install: "NVIDIA's CUDA 13 toolkit (not a Debian package, so CI cannot have it)",
  onCi: false,
  present: () => commandExists("nvcc"),
};

/** "python3-torch is not installed: apt-get install python3-torch python3-numpy" */
export function missingMessage(part: Part): string {
  return `${part.what} ${part.absent ?? "is not installed"}: ${part.install}`;
}

/** The first missing part's message, or null. */
export function missing(...parts: Part[]): string | null {
  const part = parts.find((p) => !p.present());
  return part ? missingMessage(part) : null;
}

/**
 * In a test's body: false when every part is there. Otherwise, on CI for a part CI has, it throws
 * (the test fails with the message); else it skips the test with the message and returns true,
 * and the test returns: `if (needs(t, PYTHON3_TORCH)) return;`
 */
export function needs(t: { skip: (message?: string) => void }, ...parts: Part[]): boolean {
  const part = parts.find((p) => !p.present());
  if (!part) return false;
  if (onCi() && part.onCi) assert.fail(`${missingMessage(part)} (.ci/run installs it on CI)`);
  t.skip(missingMessage(part));
  return true;
}

/**
 * For node:test's `skip` option, where a whole test or file needs the part: the message where
 * the test may skip, false where it must run. On CI the test then runs, and `requireParts` in its
 * `before` hook or body fails it with the message.
 */
export function skipUnless(...parts: Part[]): string | false {
  const part = parts.find((p) => !p.present());
  if (!part || (onCi() && part.onCi)) return false;
  return missingMessage(part);
}

/** Throws the message of the first missing part (for `before` hooks that set a machine up). */
export function requireParts(...parts: Part[]): void {
  const message = missing(...parts);
  if (message) assert.fail(onCi() ? `${message} (.ci/run installs it on CI)` : message);
}

/** pyflakes for Debian's Python: the lint of the Python payloads (test/torch-env.test.ts). */
export const PYFLAKES = aptPart(
  "python3-pyflakes",
  "python3-pyflakes",
  () => spawnSync("/usr/bin/python3", ["-m", "pyflakes", "--version"], { stdio: "ignore" }).status === 0,
);

/**
 * Debian's packaging for /usr/bin/python3 (23.0 on bookworm): the reference the PEP 440 / PEP 508
 * code is checked against (src/util/pep440-differential.test.ts).
 */
export const PYTHON3_PACKAGING = aptPart(
  "python3-packaging",
  "python3-packaging",
  () =>
    spawnSync("/usr/bin/python3", ["-s", "-c", "import packaging.requirements"], { stdio: "ignore" })
      .status === 0,
);

/** A Python with torch >= 2 (SDPA through torch.nn.attention): GPUPREP_TORCH2_PYTHON, else /work/venv-t2. */
export const TORCH2_PYTHON_PATH = process.env["GPUPREP_TORCH2_PYTHON"] ?? "/work/venv-t2/bin/python";
export const TORCH2_PYTHON: Part = {
  what: `a Python with torch >= 2 at ${TORCH2_PYTHON_PATH}`,
  absent: "is not there",
  install:
    "pip install torch into a venv and set GPUPREP_TORCH2_PYTHON to its python (no Debian package has torch 2)",
  onCi: false,
  present: () => existsSync(TORCH2_PYTHON_PATH),
};

/**
 * Whether Debian's /usr/bin/python3 finds a module (importlib's find_spec: nothing is imported).
 * For packages no list here requires and a developer's machine may still have (python3-torchvision
 * is not among .ci/run's APT_PACKAGES): a test that meets one expects what each case gives, instead
 * of assuming the package absent (or present).
 */
export function debianPythonHas(module: string): boolean {
  const script = "import importlib.util, sys; sys.exit(0 if importlib.util.find_spec(sys.argv[1]) else 1)";
  return spawnSync("/usr/bin/python3", ["-c", script, module], { stdio: "ignore" }).status === 0;
}
