/**
 * Before anything is installed: a wheel the project's lock pins (uv.lock, pylock.toml, a
 * requirements file with hashes or wheel URLs) holds CUDA code none of which runs on this GPU, or
 * that runs only through PTX JIT. Read from the wheel's own libraries (facts.lockScan, doctor
 * --fetch), not from the knowledge base, so where the scan has a verdict for torch it replaces
 * project-torch-arch-not-covered's prediction. Wheels that could not be reached are said (info),
 * never guessed.
 */
import type { Facts, LockedPackageScan } from "../facts/schema.js";
import type { KnowledgeBase } from "../kb/index.js";
import type { Finding, Fix, Rule } from "../findings/types.js";
import { ev, makeFinding } from "../findings/finding.js";
import { formatComputeCapability, smName, type ComputeCapability } from "../kb/compat.js";
import { deviceCapabilities } from "../rule-helpers/view.js";
import {
  libraryVerdicts,
  lockOfPrediction,
  packageVerdict,
  type LibraryVerdict,
  type ScannedLock,
} from "../rule-helpers/lock-scan-view.js";
import { predictTorchInstalls, type InstallPrediction } from "../project/install-prediction.js";
import { installFix } from "../rule-helpers/install-fix.js";
import { shortPath } from "../project/routes.js";
import { normalizeName } from "../util/package-name.js";

const SHOWN_LIBRARIES = 5;

function lockName(facts: Facts, lock: ScannedLock): string {
  return facts.project ? shortPath(facts.project.dir, lock.path) : lock.path;
}

/** "uv.lock", "requirements.lock (requirements)": the kind only where the name does not say it. */
function lockLabel(facts: Facts, lock: ScannedLock): string {
  const name = lockName(facts, lock);
  return name === lock.kind ? name : `${name} (${lock.kind})`;
}

function describeVerdict(v: LibraryVerdict): string {
  const how =
    v.verdict.how === "none"
      ? "cannot run"
      : v.verdict.how === "ptx-jit"
        ? `PTX JIT (${v.verdict.via[0]})`
        : `SASS (${v.verdict.via[0]})`;
  return `${v.targets.join(" ")} -> ${how}`;
}

/** The KB prediction this scan replaces: the torch install that takes its wheel from this lock. */
function replacedPrediction(
  facts: Facts,
  kb: KnowledgeBase,
  lock: ScannedLock,
  pkg: LockedPackageScan,
): InstallPrediction | null {
  if (normalizeName(pkg.name) !== "torch") return null;
  return predictTorchInstalls(facts, kb).find((p) => lockOfPrediction(facts, p)?.path === lock.path) ?? null;
}

function genericFix(facts: Facts, lock: ScannedLock, pkg: LockedPackageScan, cc: ComputeCapability): Fix {
  const sm = smName(cc);
  const name = lockName(facts, lock);
  const relock =
    lock.kind === "uv.lock"
      ? [`uv lock --upgrade-package ${pkg.name}   # after raising or re-routing its pin`]
      : [];
  return {
    summary: `Lock a ${pkg.name} wheel with ${sm} SASS (or PTX for ${formatComputeCapability(cc)} or older): a newer release, another index or CUDA variant, or a build from source for this GPU; check it before installing.`,
    commands: [...relock, `gpuprep scan --lock ${name} --gpu ${sm}`, "gpuprep doctor --fetch"],
  };
}

function packageFinding(
  rule: Rule,
  facts: Facts,
  kb: KnowledgeBase,
  lock: ScannedLock,
  pkg: LockedPackageScan,
  device: { cc: ComputeCapability; name: string },
): Finding | null {
  const verdicts = libraryVerdicts(pkg, device.cc);
  const how = packageVerdict(verdicts);
  if (how === null || how === "sass") return null;
  const gpu = `${device.name} (compute capability ${formatComputeCapability(device.cc)})`;
  const shown = verdicts.filter((v) => v.verdict.how !== "sass");
  const where = `${lockName(facts, lock)} pins ${pkg.wheel}`;
  const replaced = replacedPrediction(facts, kb, lock, pkg);
  const precedence = replaced
    ? ` This is read from the wheel itself and replaces the knowledge base's prediction for ${replaced.command}${replaced.builds[0] ? ` (${replaced.builds[0].label})` : ""}.`
    : "";
  const count = `${shown.length} of its ${verdicts.length} CUDA ${verdicts.length === 1 ? "library" : "libraries"}`;
  const message =
    how === "none"
      ? `${where}: ${count} ${shown.length === 1 ? "has" : "have"} no code that runs on ${gpu}, so ${shown.length === 1 ? "its" : "their"} kernels fail with "no kernel image is available for execution on the device".${precedence}`
      : `${where}: ${count} ${shown.length === 1 ? "runs" : "run"} on ${gpu} only by JIT-compiling PTX, slowly at first load and without kernels tuned for this GPU.${precedence}`;
  return makeFinding(rule, {
    severity: how === "none" ? "error" : "warning",
    message,
    evidence: [
      ev("lock", lockLabel(facts, lock)),
      ev("package", `${pkg.name} ${pkg.version ?? ""}`.trim()),
      ev("wheel", `${pkg.wheel} (${pkg.location})`),
      ...shown.slice(0, SHOWN_LIBRARIES).map((v) => ev(v.member, describeVerdict(v))),
      ...(shown.length > SHOWN_LIBRARIES
        ? [ev("more libraries", String(shown.length - SHOWN_LIBRARIES))]
        : []),
      ev("GPU", gpu),
      ev("platform", platformText(facts)),
    ],
    fix: replaced ? installFix(facts, kb, replaced, device.cc) : genericFix(facts, lock, pkg, device.cc),
    subject: normalizeName(pkg.name),
  });
}

function platformText(facts: Facts): string {
  const p = facts.lockScan!.platform;
  return `${p.arch}, Python ${p.python}, glibc ${p.glibc}${p.glibcAssumed ? " (assumed: the snapshot does not record it)" : ""}`;
}

/** A lock that could not be read, or wheels that could not be reached or read: said, not guessed. */
function unreadFinding(rule: Rule, facts: Facts, lock: ScannedLock): Finding | null {
  const missed = lock.packages.filter((p) => p.status === "unreachable" || p.status === "failed");
  if (!lock.error && missed.length === 0) return null;
  const name = lockName(facts, lock);
  const message = lock.error
    ? `${name} could not be read as a lock, so its wheels were not checked for this GPU: ${lock.error}.`
    : `${missed.length} of the wheels ${name} pins could not be ${missed.every((p) => p.status === "unreachable") ? "reached" : "read"}, so their CUDA code was not checked for this GPU (gpuprep does not guess it): ${missed
        .slice(0, 3)
        .map((p) => p.name)
        .join(", ")}${missed.length > 3 ? ", ..." : ""}.`;
  return makeFinding(rule, {
    severity: "info",
    message,
    evidence: [
      ev("lock", lockLabel(facts, lock)),
      ...missed.slice(0, SHOWN_LIBRARIES).map((p) => ev(`${p.name} (${p.status})`, p.reason)),
      ev("platform", platformText(facts)),
    ],
    fix: {
      summary:
        "Check that the index or server in the lock answers from here (a proxy, credentials in ~/.netrc), then run doctor again; or scan a copy of the wheel on disk.",
      commands: [`gpuprep scan --lock ${name} --timeout 600`, "gpuprep doctor --fetch"],
    },
  });
}

export const lockedWheelArchMissing: Rule = {
  id: "locked-wheel-arch-missing",
  title: "A wheel the project's lock pins has no GPU code for this GPU",
  severity: "error",
  check(facts, kb) {
    const scan = facts.lockScan;
    if (!scan) return [];
    const devices = deviceCapabilities(facts);
    const findings: Finding[] = [];
    for (const lock of scan.locks) {
      for (const pkg of lock.packages) {
        if (pkg.status !== "scanned") continue;
        // One finding per package: the first GPU it fails on (the others share the fix).
        for (const device of devices) {
          const finding = packageFinding(this, facts, kb, lock, pkg, device);
          if (finding) {
            findings.push(finding);
            break;
          }
        }
      }
      const unread = unreadFinding(this, facts, lock);
      if (unread) findings.push(unread);
    }
    return findings;
  },
};
