/** Which torch release series a PEP 440 specifier leaves room for: one copy for the planner and doctor. */
import { satisfies } from "../util/pep440.js";

/**
 * Could some release of this series (2.7 -> 2.7.0 .. 2.7.30) satisfy the specifier? The KB knows
 * builds by series; the patch a pip install picks is the newest the specifier accepts.
 */
export function seriesAccepts(series: string, specifier: string): boolean {
  if (specifier.trim() === "") return true;
  for (let patch = 0; patch <= 30; patch++)
    if (satisfies(`${series}.${patch}`, specifier) === true) return true;
  return false;
}
