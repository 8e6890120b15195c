/**
 * JUnit XML for CI systems (the Ant / Jenkins dialect that GitHub, GitLab and Jenkins read):
 * one <testsuite> per group, one <testcase> per check, <failure> or <skipped> where it applies.
 * Generic: any command turns its results into JUnitSuites.
 */

export interface JUnitCase {
  name: string;
  classname: string;
  status: "pass" | "fail" | "skip";
  /** One line: the failure or skip message. */
  message?: string;
  /** Longer text: the failure body, or <system-out> for passes (a warning, a figure). */
  details?: string;
  timeSeconds?: number;
}

export interface JUnitSuite {
  name: string;
  cases: JUnitCase[];
}

function escapeXml(text: string): string {
  return (
    text
      // Characters XML 1.0 forbids even when escaped.
      // eslint-disable-next-line no-control-regex
      .replace(/[\u0000-\u0008\u000b\u000c\u000e-\u001f\ufffe\uffff]/g, "")
      .replace(/&/g, "&amp;")
      .replace(/</g, "&lt;")
      .replace(/>/g, "&gt;")
      .replace(/"/g, "&quot;")
      .replace(/'/g, "&apos;")
  );
}

function renderCase(c: JUnitCase): string {
  const time = (c.timeSeconds ?? 0).toFixed(3);
  const open = `    <testcase name="${escapeXml(c.name)}" classname="${escapeXml(c.classname)}" time="${time}"`;
  const message = escapeXml(c.message ?? "");
  const details = c.details ? escapeXml(c.details) : "";
  if (c.status === "fail") {
    return `${open}>\n      <failure message="${message}" type="failure">${details || message}</failure>\n    </testcase>`;
  }
  if (c.status === "skip") return `${open}>\n      <skipped message="${message}"/>\n    </testcase>`;
  if (details) return `${open}>\n      <system-out>${details}</system-out>\n    </testcase>`;
  return `${open}/>`;
}

export function renderJUnit(suites: JUnitSuite[], name = "gpuprep"): string {
  const count = (cases: JUnitCase[], status: JUnitCase["status"]) =>
    cases.filter((c) => c.status === status).length;
  const all = suites.flatMap((s) => s.cases);
  const time = (cases: JUnitCase[]) => cases.reduce((sum, c) => sum + (c.timeSeconds ?? 0), 0).toFixed(3);
  const body = suites.map((suite) =>
    [
      `  <testsuite name="${escapeXml(suite.name)}" tests="${suite.cases.length}" failures="${count(suite.cases, "fail")}" errors="0" skipped="${count(suite.cases, "skip")}" time="${time(suite.cases)}">`,
      ...suite.cases.map(renderCase),
      "  </testsuite>",
    ].join("\n"),
  );
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<testsuites name="${escapeXml(name)}" tests="${all.length}" failures="${count(all, "fail")}" errors="0" skipped="${count(all, "skip")}" time="${time(all)}">`,
    ...body,
    "</testsuites>",
    "",
  ].join("\n");
}
