/**
 * The smallest change to a torch pin no build on the GPU satisfies: the runnable release series
 * nearest the one the pin names (the newer on a tie). One function for init's pin policy and
 * doctor's project fix, so both name the same torch.
 */
import { compareVersions, majorMinor, versionParts } from "../util/version.js";
import { seriesAccepts } from "./series.js";

/**
 * The release series a specifier is about: the newest series it accepts among those it names and
 * their neighbours (">=2.7,<2.8" -> 2.7: an exclusive bound's own series is not accepted); where it
 * accepts none of them, the highest release it names ("==2.5.1" -> 2.5).
 */
export function anchorSeries(specifier: string): string | null {
  const named = [...specifier.matchAll(/\d+(?:\.\d+)+/g)].map((m) => majorMinor(m[0]));
  if (named.length === 0) return null;
  const candidates = named.flatMap((series) => {
    const [major = 0, minor = 0] = versionParts(series);
    return [series, `${major}.${Math.max(0, minor - 1)}`];
  });
  const accepted = candidates.filter((series) => seriesAccepts(series, specifier)).sort(compareVersions);
  return accepted.pop() ?? named.sort(compareVersions).pop() ?? null;
}

/** Distance between two series in minor releases (majors count as 100). */
function seriesDistance(a: string, b: string): number {
  const [aMajor = 0, aMinor = 0] = versionParts(a);
  const [bMajor = 0, bMinor = 0] = versionParts(b);
  return Math.abs(aMajor * 100 + aMinor - (bMajor * 100 + bMinor));
}

/** The runnable series nearest the series `specifier` names; null when it names none or none runs. */
export function nearestSeries(specifier: string, runnable: string[]): string | null {
  const anchor = anchorSeries(specifier);
  if (!anchor) return null;
  const sorted = [...new Set(runnable)].sort(compareVersions).reverse();
  let best: string | null = null;
  for (const series of sorted)
    if (best === null || seriesDistance(series, anchor) < seriesDistance(best, anchor)) best = series;
  return best;
}
