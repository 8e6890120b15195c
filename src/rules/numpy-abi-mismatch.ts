/**
 * NumPy 1.x/2.x ABI mismatch: modules compiled against NumPy 1.x cannot run under NumPy 2, and
 * torch then cannot convert tensors to or from arrays. Detected from what the probe saw happen.
 */
import type { Evidence, Rule } from "../rule-helpers/types.js";
import { ev, makeFinding } from "../rule-helpers/finding.js";
import { torchLive } from "../rule-helpers/view.js";
import { installCommand } from "../rule-helpers/reinstall-fix.js";

const NUMPY1_COMPILED =
  /compiled using NumPy 1\.x|_ARRAY_API not found|Failed to initialize NumPy|numpy\.core\.multiarray failed to import/i;

export const numpyAbiMismatch: Rule = {
  id: "numpy-abi-mismatch",
  title: "NumPy 1.x / 2.x ABI mismatch",
  severity: "error",
  check(facts, kb) {
    const numpy = facts.python.numpy;
    const live = torchLive(facts);
    const evidence: Evidence[] = [
      ev("numpy", numpy ? `${numpy.version} at ${numpy.location}` : "(not installed)"),
    ];
    const broken: string[] = [];
    if (live && live.numpy.roundTrip === false) {
      broken.push("torch");
      evidence.push(ev("torch <-> numpy round trip", live.numpy.error ?? "failed"));
    }
    const torchWarning = live?.warnings.find((w) => NUMPY1_COMPILED.test(w));
    if (torchWarning) {
      if (!broken.includes("torch")) broken.push("torch");
      evidence.push(ev("torch warning", torchWarning));
    }
    // Without a live run (--fast), the knowledge base says what NumPy torch's wheels were built for.
    const torch = facts.python.torch;
    const platform = facts.host.cpuArch === "aarch64" ? "linux-aarch64" : "linux-x86_64";
    const builds = torch
      ? kb.torchBuildsForVersion(torch.version).filter((b) => b.platform === platform)
      : [];
    const builtForNumpy1 = builds.length > 0 && builds.every((b) => b.numpyBuildMajor === 1);
    if (!live && torch && builtForNumpy1 && numpy?.version.startsWith("2.")) {
      broken.push("torch");
      evidence.push(ev("knowledge base", `torch ${torch.version} Linux wheels were built against NumPy 1.x`));
    }
    for (const ext of facts.python.extensions) {
      const text = `${ext.error ?? ""}\n${ext.stderrTail ?? ""}`;
      if (ext.status !== "skipped" && NUMPY1_COMPILED.test(text)) {
        broken.push(ext.module);
        evidence.push(
          ev(
            `import ${ext.module}`,
            (text.match(/.*(?:NumPy 1\.x|_ARRAY_API|numpy).*/i) ?? [text])[0].trim(),
          ),
        );
      }
    }
    if (broken.length === 0) return [];
    if (live) evidence.push(ev("torch", live.version));
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
