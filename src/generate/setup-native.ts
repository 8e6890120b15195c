/**
 * scripts/setup-native.sh: a uv-managed .venv with torch from the index variant that runs natively
 * on the GPU. A pyproject project syncs (its pyproject pins torch to that index, so `uv sync`
 * keeps it); a requirements-only project installs torch first and the rest under the constraints.
 */
import { relative } from "node:path";
import type { JitToolchain, NativePlan } from "../plan/types.js";
import { CONSTRAINTS_FILE, header } from "./paths.js";
import { GIB_PER_BUILD_JOB } from "./dockerfile.js";
import { VERSION_AT_LEAST } from "./shell.js";
import { shellDoubleQuoted, shellQuote, singleLine } from "./quote.js";
import { nvccCheckScript } from "./nvcc-check.js";

/** gpuprep.env: what the venv's processes need in their environment (triton's ptxas), written by the script. */
const ENV_FILE = "gpuprep.env";

/**
 * Finds a ptxas that knows the GPU for triton (its bundled one does not) and writes it to
 * gpuprep.env; stops, naming the toolkit needed, where none is installed.
 */
export function tritonPtxasBlock(jit: JitToolchain): string {
  // The target is sm_<digits>[a]: safe inside double quotes; the single quotes are ptxas's own.
  const quotedTarget = `"'${jit.target}'"`;
  return `# triton compiles its kernels for ${jit.target} on first use with the ptxas its wheel bundles, which does not
# know ${jit.target}; a CUDA toolkit's ptxas (CUDA ${jit.minimumCuda} or newer) does. It goes into ${ENV_FILE}, for
# \`uv run --env-file ${ENV_FILE} ...\` or \`set -a; . ./${ENV_FILE}; set +a\`.
ptxas=""
for candidate in "\${TRITON_PTXAS_PATH:-}" "\${CUDA_HOME:-/usr/local/cuda}/bin/ptxas" "$(command -v ptxas || true)"; do
  if [ -n "$candidate" ] && [ -x "$candidate" ] && "$candidate" --help 2> /dev/null | grep -q ${quotedTarget}; then
    ptxas="$candidate"
    break
  fi
done
if [ -z "$ptxas" ]; then
  echo "error: no ptxas that knows ${jit.target} (tried TRITON_PTXAS_PATH, \\$CUDA_HOME/bin/ptxas, ptxas on PATH)" >&2
  echo "hint: install the CUDA ${jit.minimumCuda} (or newer) toolkit, or set TRITON_PTXAS_PATH to its ptxas, and rerun" >&2
  exit 1
fi
: > ${ENV_FILE}
${jit.variables.map((name) => `echo "${name}=$ptxas" >> ${ENV_FILE}`).join("\n")}
echo "triton will use $ptxas (${ENV_FILE})"
`;
}

/** Stops before anything is installed where the driver is missing or older than the build's CUDA needs. */
export function driverCheck(plan: NativePlan, cuda: string | null): string {
  return `if [ "\${GPUPREP_SKIP_DRIVER_CHECK:-0}" != 1 ]; then
  driver="$(nvidia-smi --query-gpu=driver_version --format=csv,noheader 2> /dev/null | head -n 1 || true)"
  if [ -z "$driver" ]; then
    echo ${shellDoubleQuoted(`error: no NVIDIA driver found (nvidia-smi); this setup is for ${singleLine(plan.target.gpuName)}`)} >&2
    echo "hint: run it on that machine, or set GPUPREP_SKIP_DRIVER_CHECK=1" >&2
    exit 1
  fi
  if ! version_at_least "$driver" "$REQUIRED_DRIVER"; then
    echo "error: NVIDIA driver $driver is older than $REQUIRED_DRIVER, which CUDA ${cuda} needs" >&2
    echo "hint: update the driver, or plan for this one: gpuprep init --strategy native --driver $driver" >&2
    exit 1
  fi
fi`;
}

/** What the install commands share: the source builds' environment, the offline or index flags, the build tools. */
interface InstallFlags {
  /** TORCH_CUDA_ARCH_LIST, the packages' own build variables and MAX_JOBS, before a command; "" without source builds. */
  buildEnv: string;
  /** uv's offline flags with a wheelhouse, "" otherwise. */
  offline: string;
  /** Where torch comes from: the wheelhouse or the planned index. */
  index: string;
  /** What a build without isolation needs in the venv itself. */
  buildTools: string;
}

function installFlags(plan: NativePlan): InstallFlags {
  const builds = plan.sourceBuilds;
  const wheelhouse = plan.options.wheelhouse;
  const offline = wheelhouse ? ` --offline --no-index --find-links ${shellQuote(wheelhouse)}` : "";
  const archList = builds[0]?.archList ?? "";
  // Every source build targets the same GPU, so one TORCH_CUDA_ARCH_LIST serves them all.
  // Packages with their own build variables (flash-attn's FLASH_ATTN_CUDA_ARCHS) get them too.
  const ownEnv = builds.flatMap((b) =>
    Object.entries(b.env).map(([name, value]) => `${name}=${shellDoubleQuoted(value)} `),
  );
  return {
    buildEnv:
      builds.length > 0
        ? `TORCH_CUDA_ARCH_LIST=${shellDoubleQuoted(archList)} ${[...new Set(ownEnv)].join("")}MAX_JOBS="$(build_jobs)" `
        : "",
    offline,
    index: wheelhouse
      ? `--no-index --find-links ${shellQuote(wheelhouse)}`
      : `--index-url ${shellQuote(plan.options.indexUrl ?? plan.native.build.indexUrl)}`,
    buildTools: `uv pip install --python .venv/bin/python${offline} -c ${CONSTRAINTS_FILE} setuptools wheel ninja`,
  };
}

/** A pyproject project syncs: its pyproject pins torch to the planned index, so `uv sync` keeps it. */
function pyprojectInstall(plan: NativePlan, flags: InstallFlags): string[] {
  const build = plan.native.build;
  const builds = plan.sourceBuilds;
  const install = [
    plan.options.wheelhouse
      ? `# Offline: every package, torch ${build.torch} ${build.variant} included, comes from ${plan.options.wheelhouse}/.`
      : `# pyproject.toml pins torch to the ${plan.native.indexName} index ([tool.uv.sources]), so sync keeps it.`,
  ];
  if (builds.some((b) => b.inProject))
    install.push(
      "# Source builds run in uv's build environment with the venv's own torch ([tool.uv.extra-build-dependencies],",
      "# match-runtime) and TORCH_CUDA_ARCH_LIST from [tool.uv.extra-build-variables]; MAX_JOBS comes from here.",
    );
  // uv sync spells it --no-binary-package NAME; uv pip install, like pip, --no-binary NAME,...
  // (uv 0.11.15 rejects --no-binary-package there: found running this script on the H100).
  const syncNoBinary = builds.map((b) => ` --no-binary-package ${shellQuote(b.name)}`).join("");
  install.push(`${flags.buildEnv}uv sync --python "$PYTHON_VERSION"${flags.offline}${syncNoBinary}`);
  return install;
}

/** A requirements-only project installs torch first and the rest under the constraints. */
function requirementsInstall(plan: NativePlan, flags: InstallFlags): string[] {
  const builds = plan.sourceBuilds;
  const install = [
    `uv venv --python "$PYTHON_VERSION" .venv`,
    `uv pip install --python .venv/bin/python ${flags.index} "torch==${plan.native.build.torch}.*"`,
  ];
  if (builds.length > 0)
    install.push(
      "# Source builds compile against the venv's torch (no build isolation): their build tools go in first.",
      flags.buildTools,
    );
  const pipNoBinary =
    builds.length > 0 ? ` --no-binary ${shellQuote(builds.map((b) => b.name).join(","))}` : "";
  const isolation = builds.map((b) => ` --no-build-isolation-package ${shellQuote(b.name)}`).join("");
  // Relative to the project root (the script cds there): requirements/base.txt, not base.txt.
  for (const file of plan.project.requirementsFiles)
    install.push(
      `${flags.buildEnv}uv pip install --python .venv/bin/python${flags.offline} -c ${CONSTRAINTS_FILE}${pipNoBinary}${isolation} -r ${shellQuote(relative(plan.project.dir, file))}`,
    );
  return install;
}

/** Asked for by name but not required by the project: installed on their own, after the rest. */
function namedBuildsInstall(plan: NativePlan, flags: InstallFlags): string[] {
  const extra = plan.sourceBuilds.filter((b) => !b.inProject);
  if (extra.length === 0) return [];
  const install: string[] = [];
  if (plan.project.hasPyproject)
    install.push(
      "# Built without isolation against the venv's torch: their build tools go in first.",
      flags.buildTools,
    );
  install.push(
    `${flags.buildEnv}uv pip install --python .venv/bin/python${flags.offline} -c ${CONSTRAINTS_FILE} --no-build-isolation --no-binary ${shellQuote(extra.map((b) => b.name).join(","))}${extra.map((b) => ` --reinstall-package ${shellQuote(b.name)}`).join("")} ${extra.map((b) => shellQuote(b.requirement)).join(" ")}`,
  );
  return install;
}

/** The script's install part: why each source build, the nvcc check, the project's install, the builds asked for by name. */
function installLines(plan: NativePlan): string[] {
  const flags = installFlags(plan);
  const nvccCheck = nvccCheckScript(plan);
  return [
    ...plan.sourceBuilds.map((b) => `# ${singleLine(`${b.name} is built from source: ${b.reason}`)}.`),
    ...(nvccCheck.length > 0 ? [...nvccCheck, ""] : []),
    ...(plan.project.hasPyproject ? pyprojectInstall(plan, flags) : requirementsInstall(plan, flags)),
    ...namedBuildsInstall(plan, flags),
  ];
}

/** A shell function: MAX_JOBS if set, else cores, but at most one per GIB_PER_BUILD_JOB GiB of available memory. */
function buildJobsFunction(): string {
  return `# Compile jobs: MAX_JOBS if set, else cores, but at most one per ${GIB_PER_BUILD_JOB} GiB of available memory.
build_jobs() {
  local jobs mem_gib
  if [ -n "\${MAX_JOBS:-}" ]; then
    echo "$MAX_JOBS"
    return
  fi
  mem_gib=$(awk '/^MemAvailable:/ { print int($2 / 1048576) }' /proc/meminfo)
  jobs=$((mem_gib / ${GIB_PER_BUILD_JOB}))
  if [ "$jobs" -gt "$(nproc)" ]; then jobs=$(nproc); fi
  if [ "$jobs" -lt 1 ]; then jobs=1; fi
  echo "$jobs"
}`;
}

export function renderSetupNative(plan: NativePlan): string {
  const native = plan.native;
  const build = native.build;
  return `#!/usr/bin/env bash
${header(plan, "#")}#
# usage: scripts/setup-native.sh   (GPUPREP_SKIP_DRIVER_CHECK=1 to set up where the GPU is not)
set -euo pipefail
cd "$(dirname "\${BASH_SOURCE[0]}")/.."

PYTHON_VERSION=${shellDoubleQuoted(native.python)}
# torch ${build.torch} ${build.variant} is built with CUDA ${build.cuda}.
REQUIRED_DRIVER=${shellDoubleQuoted(plan.requiredDriver)}

${VERSION_AT_LEAST}

${buildJobsFunction()}

${driverCheck(plan, build.cuda)}
if ! command -v uv > /dev/null 2>&1; then
  echo "error: uv is not installed" >&2
  echo "hint: see https://docs.astral.sh/uv/getting-started/installation/" >&2
  exit 1
fi
${plan.jitToolchain ? `\n${tritonPtxasBlock(plan.jitToolchain)}` : ""}
${installLines(plan).join("\n")}

.venv/bin/python -c "import torch; print('torch', torch.__version__, 'CUDA', torch.version.cuda, 'archs', torch.cuda.get_arch_list())"
echo "check it: npx gpuprep doctor --python .venv/bin/python"
`;
}
