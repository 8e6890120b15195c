/**
 * NumPy 1.x/2.x ABI mismatch: modules compiled against NumPy 1.x cannot run under NumPy 2, and
 * torch then cannot convert tensors to or from arrays. Detected from what the probe saw happen.
 */
import type { Evidence, Rule } from "../findings/types.js";
import { ev, makeFinding } from "../findings/finding.js";
import { torchLive } from "../rule-helpers/view.js";
import { installCommand } from "../rule-helpers/reinstall-fix.js";
import type { Facts } from "../facts/schema.js";
import type { KnowledgeBase } from "../kb/index.js";

const NUMPY1_COMPILED =
  /compiled using NumPy 1\.x|_ARRAY_API not found|Failed to initialize NumPy|numpy\.core\.multiarray failed to import/i;

/** What shows torch cannot use this NumPy: a failed round trip or NumPy's warning in a live run, else the KB. */
function torchEvidence(facts: Facts, kb: KnowledgeBase): Evidence[] {
  const live = torchLive(facts);
  const evidence: Evidence[] = [];
  if (live && live.numpy.roundTrip === false)
    evidence.push(ev("torch <-> numpy round trip", live.numpy.error ?? "failed"));
  const torchWarning = live?.warnings.find((w) => NUMPY1_COMPILED.test(w));
  if (torchWarning) evidence.push(ev("torch warning", torchWarning));
  // Without a live run (--fast), the knowledge base says what NumPy torch's wheels were built for.
  const torch = facts.python.torch;
  const platform = facts.host.cpuArch === "aarch64" ? "linux-aarch64" : "linux-x86_64";
  const builds = torch ? kb.torchBuildsForVersion(torch.version).filter((b) => b.platform === platform) : [];
  const builtForNumpy1 = builds.length > 0 && builds.every((b) => b.numpyBuildMajor === 1);
  if (!live && torch && builtForNumpy1 && facts.python.numpy?.version.startsWith("2."))
    evidence.push(ev("knowledge base", `torch ${torch.version} Linux wheels were built against NumPy 1.x`));
  return evidence;
}

/** The extensions whose import failed with NumPy's "compiled using NumPy 1.x" error, and its line. */
function brokenExtensions(facts: Facts): Array<{ module: string; evidence: Evidence }> {
  return facts.python.extensions.flatMap((ext) => {
    const text = `${ext.error ?? ""}\n${ext.stderrTail ?? ""}`;
    if (ext.status === "skipped" || !NUMPY1_COMPILED.test(text)) return [];
    const line = (text.match(/.*(?:NumPy 1\.x|_ARRAY_API|numpy).*/i) ?? [text])[0].trim();
    return [{ module: ext.module, evidence: ev(`import ${ext.module}`, line) }];
  });
}

export const numpyAbiMismatch: Rule = {
  id: "numpy-abi-mismatch",
  title: "NumPy 1.x / 2.x ABI mismatch",
  severity: "error",
  check(facts, kb) {
    const numpy = facts.python.numpy;
    const live = torchLive(facts);
    const torchSigns = torchEvidence(facts, kb);
    const extensions = brokenExtensions(facts);
    const broken = [...(torchSigns.length > 0 ? ["torch"] : []), ...extensions.map((e) => e.module)];
    if (broken.length === 0) return [];
    const evidence: Evidence[] = [
      ev("numpy", numpy ? `${numpy.version} at ${numpy.location}` : "(not installed)"),
      ...torchSigns,
      ...extensions.map((e) => e.evidence),
      ...(live ? [ev("torch", live.version)] : []),
    ];
    const numpy2 = numpy !== null && numpy.version.startsWith("2.");
    return [
      makeFinding(this, {
        message:
          `${broken.join(", ")} ${broken.length > 1 ? "were" : "was"} compiled against NumPy 1.x and cannot use the installed NumPy ${numpy?.version ?? ""}` +
          ` ("A module that was compiled using NumPy 1.x cannot be run in NumPy 2.x").`,
        evidence,
        fix: {
          summary: numpy2
            ? "Install NumPy 1.x for these modules, or upgrade them to releases built against NumPy 2."
            : "Align NumPy with what the modules were built for (reinstall them against this NumPy).",
          commands: numpy2
            ? [
                installCommand(facts, ['"numpy<2"']),
                `${installCommand(facts, broken, { flags: ["--upgrade"] })}   # alternative: releases built for NumPy 2`,
              ]
            : [installCommand(facts, broken, { reinstall: true })],
        },
      }),
    ];
  },
};
