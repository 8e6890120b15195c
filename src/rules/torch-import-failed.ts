/** torch is installed but importing it (in the probe's child process) raised, crashed or hung. */
import type { Rule } from "../findings/types.js";
import { ev, findingsOf } from "../findings/finding.js";
import { installCommand } from "../rule-helpers/reinstall-fix.js";
import { judgeTorchImport, TORCH_IMPORT_FAILED } from "../judge/torch-import.js";

export const torchImportFailed: Rule = {
  ...TORCH_IMPORT_FAILED,
  check(facts) {
    const torch = facts.python.torch;
    const run = facts.python.torchLive;
    // Judged with validate's check.torch-import in src/judge/torch-import.ts.
    const judgment = judgeTorchImport({ run, torch: torch ?? false });
    if (!torch) return [];
    return findingsOf(this, judgment, {
      evidence: [
        ev("torch", `${torch.version} at ${torch.location}`),
        ev("status", run.status),
        ev("error", run.error),
        ev("stderr (tail)", run.stderrTail),
        ev("duration ms", run.durationMs),
      ],
      fix: {
        summary:
          run.status === "timeout"
            ? "Find what blocks the import (a hung GPU, a network filesystem, a lock) with the command below."
            : "Reproduce the import and read the first error; a broken or mixed install is fixed by reinstalling torch.",
        commands: [
          `${facts.python.interpreter.executable} -X faulthandler -c "import torch; print(torch.__version__)"`,
          // A local tag (+cu130) names a PyTorch index build: keep the tag's index, pin the release.
          installCommand(facts, [`torch==${torch.version.split("+")[0]}`], {
            reinstall: true,
            trailing: /\+(cu\d+|cpu|rocm[\d.]+)$/.test(torch.version)
              ? ["--index-url", `https://download.pytorch.org/whl/${torch.version.split("+")[1]}`]
              : [],
          }),
        ],
      },
    });
  },
};
