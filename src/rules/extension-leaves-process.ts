/**
 * An extension whose import starts a process that outlives the import (a compile server, a
 * telemetry daemon). The probe records it and kills it; in a training job such processes stay,
 * hold GPU memory or ports, and keep a `python -c "import x"` pipeline from ending.
 */
import type { Finding, Rule } from "../findings/types.js";
import { ev, makeFinding } from "../findings/finding.js";

export const extensionLeavesProcess: Rule = {
  id: "extension-leaves-process",
  title: "Importing an extension leaves a process running",
  severity: "warning",
  check(facts) {
    const python = facts.python.interpreter.executable;
    const findings: Finding[] = [];
    for (const ext of facts.python.extensions) {
      if (ext.leftProcesses !== true) continue;
      findings.push(
        makeFinding(this, {
          message: `import ${ext.module} started a process that was still running after the import finished; gpuprep's probe killed it, but in your jobs it stays behind.`,
          evidence: [
            ev(
              "module",
              `${ext.module}${ext.distribution ? ` (${ext.distribution} ${ext.version ?? ""})` : ""}`,
            ),
            ev("import status", ext.status),
            ev("stderr (tail)", ext.stderrTail),
          ],
          fix: {
            summary:
              "See which process the import starts, then turn it off in the package's settings or report it to its authors.",
            commands: [
              `${python} -c "import ${ext.module}, os, subprocess; subprocess.run(['ps', '-o', 'pid,ppid,pgid,args', '-g', str(os.getpgid(0))])"`,
            ],
          },
        }),
      );
    }
    return findings;
  },
};
