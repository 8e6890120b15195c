/**
 * The check that stops a source build before it starts when nvcc is missing or of the wrong CUDA:
 * torch's extension builder needs nvcc of torch's CUDA major, and the GPU's architecture needs a
 * release that compiles it (plan.buildToolkit says which). nvcc is looked up the way torch's
 * cpp_extension finds it: $CUDA_HOME (or $CUDA_PATH), then PATH, then /usr/local/cuda.
 */
import type { Plan, SourceBuild } from "../plan/types.js";

/** `nvcc --version` -> "13.0" (its "release X.Y" line). */
const NVCC_RELEASE = `sed -n 's/.*release \\([0-9][0-9]*\\.[0-9][0-9]*\\).*/\\1/p'`;

function what(plan: Plan): string {
  return plan.sourceBuilds
    .filter((b) => b.needsNvcc)
    .map((b) => b.name)
    .join(", ");
}

/** Lines for setup-native.sh (it defines version_at_least); empty without source builds. */
export function nvccCheckScript(plan: Plan): string[] {
  const toolkit = plan.buildToolkit;
  if (!toolkit || !plan.sourceBuilds.some((b) => b.needsNvcc)) return [];
  const builds = what(plan);
  return [
    `# Source builds (${builds}) compile here with nvcc: it must be CUDA ${toolkit.major}.x, at least ${toolkit.minimum}. Checked before any build starts.`,
    `NVCC_MAJOR="${toolkit.major}"`,
    `NVCC_MINIMUM="${toolkit.minimum}"`,
    `nvcc_bin=""`,
    `for candidate in "\${CUDA_HOME:-\${CUDA_PATH:-}}/bin/nvcc" "$(command -v nvcc 2> /dev/null || true)" /usr/local/cuda/bin/nvcc; do`,
    `  if [ -n "$candidate" ] && [ -x "$candidate" ]; then`,
    `    nvcc_bin="$candidate"`,
    `    break`,
    `  fi`,
    `done`,
    `if [ -z "$nvcc_bin" ]; then`,
    `  echo "error: nvcc not found (CUDA_HOME, PATH, /usr/local/cuda); building ${builds} needs CUDA $NVCC_MINIMUM or a newer $NVCC_MAJOR.x toolkit" >&2`,
    `  echo "hint: install that CUDA toolkit and set CUDA_HOME to it" >&2`,
    `  exit 1`,
    `fi`,
    `nvcc_version="$("$nvcc_bin" --version | ${NVCC_RELEASE} | head -n 1)"`,
    `if [ -z "$nvcc_version" ] || [ "\${nvcc_version%%.*}" != "$NVCC_MAJOR" ] || ! version_at_least "$nvcc_version" "$NVCC_MINIMUM"; then`,
    `  echo "error: $nvcc_bin is CUDA \${nvcc_version:-of unknown version}; building ${builds} needs $NVCC_MINIMUM or a newer $NVCC_MAJOR.x" >&2`,
    `  echo "hint: point CUDA_HOME at a CUDA $NVCC_MAJOR.x toolkit of $NVCC_MINIMUM or newer" >&2`,
    `  exit 1`,
    `fi`,
    `echo "nvcc: $nvcc_bin (CUDA $nvcc_version)"`,
  ];
}

/** The same check as the first commands of a Dockerfile build stage's RUN (POSIX sh, `&&`-free). */
export function nvccCheckDockerfile(plan: Plan, build: SourceBuild): string[] {
  const toolkit = plan.buildToolkit;
  if (!toolkit || !build.needsNvcc) return [];
  const name = build.name;
  return [
    `nvcc_version="$(nvcc --version 2> /dev/null | ${NVCC_RELEASE} | head -n 1)"; \\`,
    `    if [ -z "$nvcc_version" ]; then echo "error: no nvcc in the base image; building ${name} needs CUDA ${toolkit.minimum} or a newer ${toolkit.major}.x" >&2; exit 1; fi; \\`,
    `    if [ "\${nvcc_version%%.*}" != "${toolkit.major}" ] || [ "$(printf '%s\\n%s\\n' "${toolkit.minimum}" "$nvcc_version" | sort -V | head -n 1)" != "${toolkit.minimum}" ]; then \\`,
    `      echo "error: nvcc is CUDA $nvcc_version; building ${name} needs ${toolkit.minimum} or a newer ${toolkit.major}.x" >&2; exit 1; \\`,
    `    fi; \\`,
  ];
}
