/**
 * SARIF 2.1.0 (https://docs.oasis-open.org/sarif/sarif/v2.1.0/sarif-v2.1.0.html): one result per
 * finding, the rule catalogue from the registry, so code-scanning UIs can show doctor's findings.
 */
import type { Finding, Rule, Severity } from "../rules/types.js";
import { docsPath } from "../rules/types.js";
import { TOOL_VERSION } from "../version.js";

const LEVEL: Record<Severity, "error" | "warning" | "note"> = {
  error: "error",
  warning: "warning",
  info: "note",
};

export function renderSarif(findings: Finding[], rules: readonly Rule[]): string {
  const index = new Map(rules.map((rule, i) => [rule.id, i]));
  const log = {
    $schema: "https://json.schemastore.org/sarif-2.1.0.json",
    version: "2.1.0",
    runs: [
      {
        tool: {
          driver: {
            name: "gpuprep",
            version: TOOL_VERSION,
            informationUri: "https://www.npmjs.com/package/gpuprep",
            rules: rules.map((rule) => ({
              id: rule.id,
              name: rule.id,
              shortDescription: { text: rule.title },
              help: { text: `See ${docsPath(rule.id)} in the gpuprep package.` },
              defaultConfiguration: { level: LEVEL[rule.severity] },
            })),
          },
        },
        results: findings.map((finding) => ({
          ruleId: finding.ruleId,
          ...(index.has(finding.ruleId) ? { ruleIndex: index.get(finding.ruleId) } : {}),
          level: LEVEL[finding.severity],
          message: {
            text: [
              finding.message,
              ...finding.evidence.map((e) => `${e.label}: ${e.value}`),
              `Fix: ${finding.fix.summary}`,
              ...finding.fix.commands,
            ].join("\n"),
          },
          properties: { evidence: finding.evidence, fix: finding.fix },
        })),
      },
    ],
  };
  return JSON.stringify(log, null, 2) + "\n";
}
