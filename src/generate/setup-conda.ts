/**
 * scripts/setup-conda.sh: the native setup of a conda project. environment.yml was edited by init
 * (conda-pin.ts) to a torch that runs on the GPU; this checks the driver (and triton's ptxas where
 * the GPU needs one), runs `env update --prune` with mamba where it is installed (conda else),
 * and shows the torch that landed, failing where its build has no code for the GPU. No uv venv is
 * made beside the conda environment.
 */
import type { NativePlan } from "../plan/types.js";
import { smName } from "../vocabulary/compute-capability.js";
import { VERSION_AT_LEAST } from "./shell.js";
import { shellDoubleQuoted, shellQuote } from "./quote.js";
import { header } from "./paths.js";
import { driverCheck, tritonPtxasBlock } from "./setup-native.js";

/**
 * @param file the environment file's name ("environment.yml")
 * @param envName its `name:`; null where it has none (the project's name is given with --name then)
 */
export function renderSetupConda(plan: NativePlan, file: string, envName: string | null): string {
  const build = plan.native.build;
  const sm = smName(plan.target.capability);
  const name = envName ?? plan.project.name;
  // conda env update takes the environment's name from the file; a file without one needs --name.
  const nameFlag = envName === null ? ` --name ${shellQuote(name)}` : "";
  return `#!/usr/bin/env bash
${header(plan, "#")}#
# usage: scripts/setup-conda.sh   (GPUPREP_SKIP_DRIVER_CHECK=1 to set up where the GPU is not)
set -euo pipefail
cd "$(dirname "\${BASH_SOURCE[0]}")/.."

# torch ${build.torch} ${build.variant} (${file}, pip: list) is built with CUDA ${build.cuda}.
REQUIRED_DRIVER=${shellDoubleQuoted(plan.requiredDriver)}

${VERSION_AT_LEAST}

${driverCheck(plan, build.cuda)}

# mamba solves the same environment file faster; conda does it where mamba is not installed.
if command -v mamba > /dev/null 2>&1; then
  CONDA=mamba
elif command -v conda > /dev/null 2>&1; then
  CONDA=conda
else
  echo "error: neither mamba nor conda is installed" >&2
  echo "hint: install Miniforge (https://conda-forge.org/download/), then run this again" >&2
  exit 1
fi
echo "using $CONDA ($(command -v "$CONDA"))"
${plan.jitToolchain ? `\n${tritonPtxasBlock(plan.jitToolchain)}` : ""}
"$CONDA" env update${nameFlag} --file ${shellQuote(file)} --prune
# The torch that landed must be the planned build: a conda package that pulls its own torch would win.
"$CONDA" run --name ${shellQuote(name)} python -c "import torch, sys; print('torch', torch.__version__, 'CUDA', torch.version.cuda, 'archs', torch.cuda.get_arch_list()); sys.exit(0 if torch.version.cuda else 'error: a CPU-only torch was installed')"
echo ${shellDoubleQuoted(`check it: conda activate ${name} && npx gpuprep doctor   (the GPU needs ${sm} or its family's code)`)}
`;
}
