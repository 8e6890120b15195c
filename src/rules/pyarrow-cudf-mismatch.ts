/**
 * RAPIDS cudf pins pyarrow to a narrow range; a pyarrow installed later for another package
 * breaks `import cudf`. Judged from the import's own error text, the one fact that proves it.
 */
import type { Finding, Rule } from "../findings/types.js";
import { ev, makeFinding } from "../findings/finding.js";
import { checkCommand, installCommand } from "../rule-helpers/reinstall-fix.js";

const PYARROW_ERROR = /pyarrow/i;

export const pyarrowCudfMismatch: Rule = {
  id: "pyarrow-cudf-mismatch",
  title: "pyarrow does not match what cudf was built for",
  severity: "error",
  check(facts) {
    const findings: Finding[] = [];
    const pyarrow = facts.python.distributions.find((d) => d.normalizedName === "pyarrow");
    const cudfDists = facts.python.distributions.filter((d) =>
      /^(cudf|pylibcudf)(-cu\d+)?$/.test(d.normalizedName),
    );
    for (const ext of facts.python.extensions) {
      if (!/^(cudf|pylibcudf|dask_cudf)$/.test(ext.module) || ext.status === "ok" || ext.status === "skipped")
        continue;
      const text = `${ext.error ?? ""}\n${ext.stderrTail ?? ""}`;
      if (!PYARROW_ERROR.test(text)) continue;
      // The import names its distribution when the distribution list does not hold it.
      const dist =
        cudfDists[0] ??
        (ext.distribution && ext.version ? { name: ext.distribution, version: ext.version } : undefined);
      findings.push(
        makeFinding(this, {
          message: `import ${ext.module} fails on pyarrow ${pyarrow?.version ?? "(not installed)"}: cudf is built for a specific pyarrow range and another package changed it.`,
          evidence: [
            ev("cudf", dist ? `${dist.name} ${dist.version}` : ext.distribution),
            ev("pyarrow", pyarrow ? `${pyarrow.version} at ${pyarrow.location}` : "(not installed)"),
            ev("error", (text.match(/.*pyarrow.*/i) ?? [""])[0].trim()),
          ],
          fix: {
            summary: "Let pip pick the pyarrow that cudf declares (and keep it with a constraint).",
            commands: [
              // With its dependencies: pyarrow is one of them.
              installCommand(facts, [`${dist?.name ?? "cudf-cu12"}==${dist?.version ?? "<version>"}`], {
                reinstall: true,
              }),
              checkCommand(facts),
            ],
          },
        }),
      );
    }
    return findings;
  },
};
