/**
 * scripts/setup-pixi.sh: the native setup of a pixi project. pixi.toml was edited by init
 * (pixi-pin.ts) to a torch that runs on the GPU; this checks the driver (and triton's ptxas where
 * the GPU needs one), runs `pixi install`, and shows the torch that landed, failing where its
 * build has no code for the GPU (a conda dependency that pulls its own torch would do that).
 */
import type { NativePlan } from "../plan/types.js";
import { smName } from "../vocabulary/compute-capability.js";
import { VERSION_AT_LEAST } from "./shell.js";
import { shellDoubleQuoted } from "./quote.js";
import { header } from "./paths.js";
import { driverCheck, tritonPtxasBlock } from "./setup-native.js";

export function renderSetupPixi(plan: NativePlan): string {
  const build = plan.native.build;
  const sm = smName(plan.target.capability);
  return `#!/usr/bin/env bash
${header(plan, "#")}#
# usage: scripts/setup-pixi.sh   (GPUPREP_SKIP_DRIVER_CHECK=1 to set up where the GPU is not)
set -euo pipefail
cd "$(dirname "\${BASH_SOURCE[0]}")/.."

# torch ${build.torch} ${build.variant} (pixi.toml [pypi-dependencies]) is built with CUDA ${build.cuda}.
REQUIRED_DRIVER=${shellDoubleQuoted(plan.requiredDriver)}

${VERSION_AT_LEAST}

${driverCheck(plan, build.cuda)}

if ! command -v pixi > /dev/null 2>&1; then
  echo "error: pixi is not installed" >&2
  echo "hint: see https://pixi.sh/latest/#installation" >&2
  exit 1
fi
${plan.jitToolchain ? `\n${tritonPtxasBlock(plan.jitToolchain)}` : ""}
pixi install
# The torch that landed must be the planned build: a conda package that pulls its own torch would win.
pixi run python -c "import torch, sys; print('torch', torch.__version__, 'CUDA', torch.version.cuda, 'archs', torch.cuda.get_arch_list()); sys.exit(0 if torch.version.cuda else 'error: a CPU-only torch was installed')"
echo "check it: npx gpuprep doctor --python .pixi/envs/default/bin/python   (the GPU needs ${sm} or its family's code)"
`;
}
