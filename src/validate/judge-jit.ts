/**
 * JIT dependence: the same smoke calls ran in a child as the user runs them and in one with
 * CUDA_DISABLE_PTX_JIT=1. A call that works only in the first ran through the driver's JIT
 * compilation of PTX: slow first calls (the compile), and a failure wherever JIT is unavailable
 * (a driver older than the PTX, JIT disabled). Calibrated on the H100 with two builds of one
 * extension, PTX only and SASS (docs/reports/validate-jit-calibration-h100.txt).
 */
import type { JitSmoke, Payload } from "./payload.js";
import type { ValidationItem } from "./report.js";
import { describeRun } from "./judge-checks.js";

type JitVerdict = "native" | "jit-dependent" | "fails" | "unchecked";

interface JitRow {
  name: string;
  what: string;
  verdict: JitVerdict;
  normal: JitSmoke | null;
  noJit: JitSmoke | null;
}

/** Each smoke of the normal run beside its run without driver JIT. */
export function jitRows(payload: Payload): JitRow[] {
  const jit = payload.jit;
  if (!jit) return [];
  const without = new Map(jit.noJit.smokes.map((s) => [s.name, s]));
  return jit.normal.smokes.map((normal) => {
    const noJit = without.get(normal.name) ?? null;
    let verdict: JitVerdict;
    if (!normal.ok) verdict = "fails";
    else if (!noJit) verdict = "unchecked";
    else verdict = noJit.ok ? "native" : "jit-dependent";
    return { name: normal.name, what: normal.what, verdict, normal, noJit };
  });
}

const ms = (value: number | null | undefined) =>
  value === null || value === undefined ? "?" : `${value.toFixed(1)} ms`;

function libraries(smoke: JitSmoke | null): string {
  const libs = smoke?.libraries ?? [];
  return libs.length > 0 ? ` (loaded ${libs.slice(0, 4).join(", ")})` : "";
}

function check(
  suffix: string,
  title: string,
  status: ValidationItem["status"],
  reason: string,
): ValidationItem {
  return { id: `check.jit${suffix}`, group: "check", category: "jit", title, status, reason };
}

const HEADLINE = "kernels run without driver JIT";

export function judgeJit(payload: Payload): ValidationItem[] {
  const jit = payload.jit;
  if (!jit) return [];
  const rows = jitRows(payload);
  if (rows.length === 0) return [check("", HEADLINE, "fail", describeRun(jit.normal.run))];
  // No GPU to run anything on (CUDA does not initialise): nothing to tell about JIT.
  const init = rows.find((r) => r.name === "cuda-init" || r.name === "setup");
  if (!init || init.verdict === "fails")
    return [
      check(
        "",
        HEADLINE,
        "skip",
        `no CUDA device to run kernels on: ${init?.normal?.error ?? "CUDA did not initialise"}`,
      ),
    ];
  return [headline(rows), ...rows.flatMap((row) => rowItem(row, jit))];
}

/** A call that needed the JIT, failed, or was not checked without it; nothing for a native one. */
function rowItem(row: JitRow, jit: NonNullable<Payload["jit"]>): ValidationItem[] {
  const id = `.${row.name}`;
  if (row.verdict === "jit-dependent")
    return [
      check(
        id,
        `${row.what} runs without driver JIT`,
        "warn",
        `${row.what} ran only through the driver's JIT compilation of PTX${libraries(row.normal)}: with CUDA_DISABLE_PTX_JIT=1 it failed (${row.noJit?.error ?? "no error text"}); first call ${ms(row.normal?.firstCallMs)} with JIT, failed after ${ms(row.noJit?.firstCallMs)} without. Install a build with SASS for this GPU`,
      ),
    ];
  if (row.verdict === "fails" && row.name.startsWith("smoke."))
    return [check(id, `${row.what} runs`, "fail", `raised ${row.normal?.error ?? "?"}`)];
  if (row.verdict === "unchecked")
    return [
      check(
        id,
        `${row.what} runs without driver JIT`,
        "warn",
        `not checked: the child without driver JIT ended first (${describeRun(jit.noJit.run)})`,
      ),
    ];
  return [];
}

/** The one verdict: how many calls ran the same without the JIT, which did not, which never run here. */
function headline(rows: JitRow[]): ValidationItem {
  const native = rows.filter((r) => r.verdict === "native");
  const refused = rows.filter((r) => r.verdict === "fails" && !r.name.startsWith("smoke."));
  const refusedText =
    refused.length > 0
      ? `; ${refused.map((r) => r.name).join(", ")} do not run here either way (not a JIT matter)`
      : "";
  const summary = native
    .map((r) => `${r.name} ${ms(r.normal?.firstCallMs)} / ${ms(r.noJit?.firstCallMs)}`)
    .join(", ");
  const dependentRows = rows.filter((r) => r.verdict === "jit-dependent" || r.verdict === "unchecked");
  const dependent = dependentRows.length > 0;
  const dependentText = dependent ? `; ${dependentRows.map((r) => r.what).join(", ")} did not (below)` : "";
  return check(
    "",
    HEADLINE,
    dependent ? "warn" : native.length > 0 ? "pass" : "fail",
    `${native.length} of ${rows.length} calls ran the same with CUDA_DISABLE_PTX_JIT=1: native SASS (first call with / without JIT: ${summary || "none"})${dependentText}${refusedText}`,
  );
}
