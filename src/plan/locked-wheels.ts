/**
 * init --fetch (issue 25 item 2): what the project's locked wheels hold for the planned machine,
 * read before anything is installed (gather/lock-scan.ts) and said as one decision of the plan,
 * which SETUP.md lists: which wheels were read, which cannot run or only through PTX JIT, and which
 * could not be reached. torch and what the plan chooses with it (its companions, source builds, what
 * an image provides) are the plan's own and not judged from the lock. Pure: the scan is an input.
 */
import type { LockScanFacts } from "../facts/schema.js";
import { smName, type ComputeCapability } from "../kb/compat.js";
import { libraryVerdicts, packageVerdict } from "../project/locked-wheels.js";
import { normalizeName } from "../util/package-name.js";
import type { Decision, Plan } from "./types.js";

/** Packages whose build the plan picks itself, so the lock's wheel of them is not what gets installed. */
function plannedElsewhere(plan: Plan): Set<string> {
  const own = ["torch", "torchvision", "torchaudio", "triton"];
  const protectedNames = (plan.strategy === "container" ? plan.container : plan.native).protected.map(
    (p) => p.name,
  );
  return new Set([...own, ...protectedNames, ...plan.sourceBuilds.map((b) => b.name)].map(normalizeName));
}

function imageNote(plan: Plan): string {
  return plan.strategy === "container"
    ? `; the image ${plan.container.ref} was not read (its layers are gigabytes): \`gpuprep scan docker://${plan.container.ref} --target NAME\` reads its libraries without pulling it`
    : "";
}

interface SortedPackages {
  /** "name version (member: targets; ...)" of the packages with no code for the GPU. */
  cannot: string[];
  /** The same, of those that run only through PTX JIT. */
  jit: string[];
  /** "name (reason)" of those not reached or not readable. */
  unread: string[];
  /** How many were read and judged. */
  read: number;
}

/** The lock's packages by verdict for `cc`, those the plan installs itself (`skip`) left out. */
function sortLockedPackages(
  scan: LockScanFacts,
  cc: ComputeCapability,
  skip: ReadonlySet<string>,
): SortedPackages {
  const sorted: SortedPackages = { cannot: [], jit: [], unread: [], read: 0 };
  for (const lock of scan.locks)
    for (const pkg of lock.packages) {
      if (skip.has(normalizeName(pkg.name))) continue;
      if (pkg.status === "unreachable" || pkg.status === "failed")
        sorted.unread.push(`${pkg.name} (${pkg.reason})`);
      if (pkg.status !== "scanned") continue;
      sorted.read++;
      const verdicts = libraryVerdicts(pkg, cc);
      const how = packageVerdict(verdicts);
      const bad = verdicts
        .filter((v) => v.verdict.how !== "sass")
        .map((v) => `${v.member}: ${v.targets.join(" ")}`);
      const line = `${pkg.name} ${pkg.version ?? ""} (${bad.join("; ")})`;
      if (how === "none") sorted.cannot.push(line);
      else if (how === "ptx-jit") sorted.jit.push(line);
    }
  return sorted;
}

/** The decision for a scan, or for why none was made (`unscanned`). */
export function lockedWheelsDecision(
  plan: Plan,
  scan: LockScanFacts | null,
  unscanned: string | null,
): Decision {
  const topic = "locked wheels";
  if (!scan)
    return {
      topic,
      choice: "not checked",
      reason: `${unscanned ?? "the project has no lock"}${imageNote(plan)}`,
      sources: [],
    };
  const cc = plan.target.capability;
  const { cannot, jit, unread, read } = sortLockedPackages(scan, cc, plannedElsewhere(plan));
  const sm = smName(cc);
  const locks = scan.locks.map((l) => l.path.split("/").pop()).join(", ");
  const where = `${scan.platform.arch}, Python ${scan.platform.python}, glibc ${scan.platform.glibc}${scan.platform.glibcAssumed ? " (assumed)" : ""}`;
  const fetched = scan.locks.reduce((sum, l) => sum + l.bytesFetched, 0);
  const choice =
    cannot.length > 0
      ? `${cannot.length} of ${read} wheels read from ${locks} cannot run on ${sm}`
      : read === 0
        ? `no wheel with CUDA code read from ${locks}`
        : `${read} wheels read from ${locks}: ${jit.length > 0 ? `${jit.length} only through PTX JIT on ${sm}` : `all run on ${sm}`}`;
  const parts = [
    `read before installing, for ${where}, as the lock pins them today (${fetched.toLocaleString("en-US")} bytes fetched)`,
    ...(cannot.length ? [`no code for ${sm}: ${cannot.join(", ")}`] : []),
    ...(jit.length ? [`PTX JIT only: ${jit.join(", ")}`] : []),
    ...(unread.length ? [`not reached or not readable, so not checked: ${unread.join(", ")}`] : []),
    "torch, its companions and source builds are the plan's own and not judged from the lock",
  ];
  return { topic, choice, reason: parts.join("; ") + imageNote(plan), sources: [] };
}
