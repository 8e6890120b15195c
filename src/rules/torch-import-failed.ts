/** torch is installed but importing it (in the probe's child process) raised, crashed or hung. */
import type { Rule } from "../rule-helpers/types.js";
import { ev, makeFinding } from "../rule-helpers/finding.js";
import { installCommand } from "../rule-helpers/reinstall-fix.js";

export const torchImportFailed: Rule = {
  id: "torch-import-failed",
  title: "import torch fails",
  severity: "error",
  check(facts) {
    const torch = facts.python.torch;
    const run = facts.python.torchLive;
    if (!torch || !["error", "crash", "timeout"].includes(run.status)) return [];
    const what =
      run.status === "crash"
        ? `crashed (signal ${run.signal ?? "?"}, exit ${run.exitCode ?? "?"})`
        : run.status === "timeout"
          ? `did not finish within ${Math.round(run.durationMs / 1000)} s`
          : `raised: ${(run.error ?? "").split("\n").slice(-1)[0] ?? ""}`;
    return [
      makeFinding(this, {
        message: `import torch (${torch.version} at ${torch.location}) ${what}.`,
        evidence: [
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
      }),
    ];
  },
};
