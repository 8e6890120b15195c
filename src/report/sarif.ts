/**
 * SARIF 2.1.0 (https://docs.oasis-open.org/sarif/sarif/v2.1.0/sarif-v2.1.0.html): one result per
 * finding, the rule catalogue from the registry, so code-scanning UIs can show doctor's findings.
 * GitHub's upload needs more than the schema does (a location on every result, the rule's
 * descriptions and help text); test/doctor/sarif.test.ts checks both.
 */
import { createHash } from "node:crypto";
import type { Facts } from "../facts/schema.js";
import type { Finding, Rule, Severity } from "../findings/types.js";
import { ruleDocsUrl } from "../findings/types.js";
import { HOMEPAGE_URL, TOOL_VERSION } from "../version.js";
import { fileUri, findingLocation } from "./sarif-location.js";
import { renderJson } from "./envelope.js";

const LEVEL: Record<Severity, "error" | "warning" | "note"> = {
  error: "error",
  warning: "warning",
  info: "note",
};

/**
 * GitHub matches a result across runs by partialFingerprints.primaryLocationLineHash ("hash:n",
 * n counting equal hashes); upload-sarif can only compute it from files in the repository, and
 * a doctor finding's location often lies outside it (a venv), so doctor supplies its own: the
 * rule, the location and the line, the same finding in the same place keeping its alert.
 */
function fingerprints(keys: string[]): string[] {
  const seen = new Map<string, number>();
  return keys.map((key) => {
    const hash = createHash("sha256").update(key).digest("hex").slice(0, 16);
    const occurrence = (seen.get(hash) ?? 0) + 1;
    seen.set(hash, occurrence);
    return `${hash}:${occurrence}`;
  });
}

export function renderSarif(findings: Finding[], rules: readonly Rule[], facts: Facts): string {
  const index = new Map(rules.map((rule, i) => [rule.id, i]));
  const located = findings.map((finding) => ({ finding, location: findingLocation(finding, facts) }));
  const hashes = fingerprints(
    located.map(({ finding, location }) => [finding.ruleId, location.path, location.line ?? 0].join("\0")),
  );
  const log = {
    $schema: "https://json.schemastore.org/sarif-2.1.0.json",
    version: "2.1.0",
    runs: [
      {
        tool: {
          driver: {
            name: "gpuprep",
            version: TOOL_VERSION,
            semanticVersion: TOOL_VERSION,
            informationUri: HOMEPAGE_URL,
            rules: rules.map((rule) => ({
              id: rule.id,
              name: rule.id,
              shortDescription: { text: rule.title },
              fullDescription: { text: `${rule.title}. Symptom, cause and fix: ${ruleDocsUrl(rule.id)}` },
              helpUri: ruleDocsUrl(rule.id),
              help: {
                text: `Symptom, cause and fix: ${ruleDocsUrl(rule.id)}`,
                markdown: `Symptom, cause and fix: [${rule.id}](${ruleDocsUrl(rule.id)})`,
              },
              defaultConfiguration: { level: LEVEL[rule.severity] },
            })),
          },
        },
        results: located.map(({ finding, location }, i) => ({
          ruleId: finding.ruleId,
          ...(index.has(finding.ruleId) ? { ruleIndex: index.get(finding.ruleId) } : {}),
          level: LEVEL[finding.severity],
          message: {
            text: [
              finding.message,
              ...finding.evidence.map((e) => `${e.label}: ${e.value}`),
              `Fix: ${finding.fix.summary}`,
              ...finding.fix.commands,
              `Docs: ${finding.docs}`,
            ].join("\n"),
          },
          locations: [
            {
              physicalLocation: {
                artifactLocation: { uri: fileUri(location.path) },
                // A whole line: SARIF's endColumn defaults to the end of endLine, and the report
                // reads no files to measure one. Line 1 where the location has no lines of its
                // own (an environment directory, an interpreter): GitHub asks for a startLine.
                region: { startLine: location.line ?? 1, startColumn: 1, endLine: location.line ?? 1 },
              },
            },
          ],
          partialFingerprints: { primaryLocationLineHash: hashes[i]! },
          properties: { evidence: finding.evidence, fix: finding.fix, docs: finding.docs },
        })),
      },
    ],
  };
  return renderJson(log);
}
