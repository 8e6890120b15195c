/** Any other distribution installed in more than one location: the import and pip may disagree. */
import type { Rule } from "../findings/types.js";
import { ev, makeFinding } from "../findings/finding.js";

export const duplicateDistributions: Rule = {
  id: "duplicate-distributions",
  title: "Packages installed more than once",
  severity: "warning",
  check(facts) {
    // torch has its own, stricter rule. Same-version copies (pip and setuptools seeded into every
    // --system-site-packages venv) import the same code, so only differing versions are reported.
    const duplicates = facts.python.duplicates.filter(
      (d) => d.normalizedName !== "torch" && new Set(d.entries.map((e) => e.version)).size > 1,
    );
    if (duplicates.length === 0) return [];
    const python = facts.python.interpreter.executable;
    const describe = (d: (typeof duplicates)[number]) => {
      const entries = [...d.entries].sort((a, b) => a.pathIndex - b.pathIndex);
      return { name: d.normalizedName, winner: entries[0], others: entries.slice(1) };
    };
    const rows = duplicates.map(describe);
    return [
      makeFinding(this, {
        message: `${rows.length} package(s) are installed in more than one sys.path location with different versions: ${rows.map((r) => r.name).join(", ")}. Python imports the first; pip may report or upgrade another.`,
        evidence: rows.map((r) =>
          ev(
            r.name,
            `imports ${r.winner?.version} from ${r.winner?.location}; also ${r.others.map((o) => `${o.version} in ${o.location}`).join(", ")}`,
          ),
        ),
        fix: {
          summary:
            "Uninstall the copies you do not want (pip removes the first one it finds each time), then check with pip list -v.",
          commands: [
            ...rows.map((r) => `${python} -m pip uninstall -y ${r.name}`),
            `${python} -m pip list -v`,
          ],
        },
      }),
    ];
  },
};
