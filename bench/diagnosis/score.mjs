// Scoring one doctor answer against its case, and the summary and table of a whole run.
const RANK = { error: 0, warning: 1, info: 2 };

const atLeast = (severity, floor) => RANK[severity] <= RANK[floor];

/**
 * hit: the expected rule is reported at its severity floor (warning unless the case says info);
 * top: it is doctor's first finding (doctor lists errors first); extras: other error/warning
 * findings the case does not accept as true of the environment; for a control, every
 * error/warning finding is a false alarm.
 */
export function scoreCase(testCase, findings) {
  const loud = findings.filter((f) => atLeast(f.severity, "warning"));
  if (!testCase.expect) {
    return { hit: null, top: null, falseAlarms: loud.map((f) => f.ruleId), extras: [] };
  }
  const floor = testCase.minSeverity ?? "warning";
  const hit = findings.some((f) => f.ruleId === testCase.expect && atLeast(f.severity, floor));
  const top = findings[0]?.ruleId === testCase.expect;
  const accepted = new Set([testCase.expect, ...(testCase.accept ?? [])]);
  const extras = loud.filter((f) => !accepted.has(f.ruleId)).map((f) => f.ruleId);
  return { hit, top, falseAlarms: [], extras: [...new Set(extras)] };
}

export function summarize(results) {
  const broken = results.filter((r) => r.expect);
  const controls = results.filter((r) => !r.expect);
  const count = (rows, key) => rows.filter((r) => r[key] === true).length;
  return {
    brokenCases: broken.length,
    hits: count(broken, "hit"),
    tops: count(broken, "top"),
    misses: broken.filter((r) => r.hit !== true).map((r) => ({ id: r.id, expect: r.expect, error: r.error })),
    casesWithExtras: broken.filter((r) => r.extras.length > 0).length,
    controls: controls.length,
    controlsWithFalseAlarms: controls.filter((r) => r.falseAlarms.length > 0 || r.error).length,
    falseAlarms: controls.flatMap((r) => r.falseAlarms.map((ruleId) => ({ id: r.id, ruleId }))),
    byKind: Object.fromEntries(
      [...new Set(broken.map((r) => r.kind))].map((kind) => {
        const rows = broken.filter((r) => r.kind === kind);
        return [kind, { cases: rows.length, hits: count(rows, "hit") }];
      }),
    ),
  };
}

const pad = (text, width) => String(text).padEnd(width);

export function renderTable(results, summary) {
  const lines = [];
  const header = [
    pad("case", 40),
    pad("catalog", 7),
    pad("kind", 9),
    pad("expected rule", 35),
    "hit  top  findings (E/W)",
  ];
  lines.push(header.join(" "));
  for (const r of results) {
    const mark = (v) => (v === null ? "-" : v ? "yes" : "NO");
    const found = r.error
      ? `could not run: ${r.error}`
      : r.findings
          .filter((f) => f.severity !== "info")
          .map((f) => `${f.severity[0].toUpperCase()}:${f.ruleId}`)
          .join(" ") || "(none)";
    lines.push(
      [
        pad(r.id, 40),
        pad(r.catalog ?? "-", 7),
        pad(r.kind, 9),
        pad(r.expect ?? "(control)", 35),
        pad(r.expect ? mark(r.hit) : r.falseAlarms.length ? "FALSE ALARM" : "clean", 4),
        pad(r.expect ? mark(r.top) : "", 4),
        found,
      ].join(" "),
    );
  }
  const pct = (n, d) => (d ? `${Math.round((100 * n) / d)} %` : "-");
  lines.push("");
  lines.push(
    `broken environments: ${summary.brokenCases}; hit ${summary.hits} (${pct(summary.hits, summary.brokenCases)}), ` +
      `top finding ${summary.tops} (${pct(summary.tops, summary.brokenCases)}), ` +
      `with unexplained extra error/warning findings ${summary.casesWithExtras}`,
  );
  lines.push(
    `healthy controls: ${summary.controls}; with a false alarm ${summary.controlsWithFalseAlarms}` +
      (summary.falseAlarms.length
        ? ` (${summary.falseAlarms.map((f) => `${f.id}: ${f.ruleId}`).join(", ")})`
        : ""),
  );
  if (summary.misses.length)
    lines.push(`misses: ${summary.misses.map((m) => `${m.id} (${m.expect})`).join(", ")}`);
  return lines.join("\n");
}
