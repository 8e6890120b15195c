/**
 * Before anything is installed: the torch build the project's manifests select (a PyTorch index
 * route, a pin, a conda-forge or pytorch-channel build) has no code for this GPU, or runs it only
 * through PTX JIT. Silent where the build is CPU-only (project-torch-cpu-only says that), and
 * where the install's lock was scanned and its torch wheel read (doctor --fetch): the wheel's own
 * verdict (locked-wheel-arch-missing) takes precedence over the knowledge base's.
 */
import type { Finding, Rule } from "../findings/types.js";
import { ev, makeFinding } from "../findings/finding.js";
import type { Facts } from "../facts/schema.js";
import { coverageFor, formatComputeCapability, smName, type ComputeCapability } from "../kb/compat.js";
import { deviceCapabilities } from "../rule-helpers/view.js";
import { predictTorchInstalls, type InstallPrediction } from "../project/install-prediction.js";
import { installFix } from "../rule-helpers/install-fix.js";
import { scannedTorchOf } from "../rule-helpers/lock-scan-view.js";

function predictionEvidence(prediction: InstallPrediction) {
  return [
    ev("install", `${prediction.command} (${prediction.manifest})`),
    ...prediction.lines.map((line) => ev(line.origin, line.text)),
    ...(prediction.how ? [ev("how", prediction.how)] : []),
  ];
}

/** What an install would put in place for torch is not known: an info finding saying so. */
function unknownTorchFinding(
  rule: Rule,
  facts: Facts,
  prediction: InstallPrediction,
  unknown: string,
  cc: ComputeCapability,
): Finding {
  return makeFinding(rule, {
    severity: "info",
    message: `What ${prediction.command} would install for torch is not known, so gpuprep cannot say whether it runs on this GPU: ${unknown}.`,
    evidence: predictionEvidence(prediction),
    fix: {
      summary:
        "Check the torch it installs once it is in place (gpuprep doctor), or pin a build the knowledge base knows.",
      commands: [
        `gpuprep kb resolve --gpu ${formatComputeCapability(cc)} --driver ${facts.host.nvidia.driverVersion ?? "VER"}`,
      ],
    },
  });
}

export const projectTorchArchNotCovered: Rule = {
  id: "project-torch-arch-not-covered",
  title: "Installing the project would give a torch with no code for this GPU",
  severity: "error",
  check(facts, kb) {
    const devices = deviceCapabilities(facts);
    if (devices.length === 0) return [];
    const findings: Finding[] = [];
    for (const prediction of predictTorchInstalls(facts, kb)) {
      if (scannedTorchOf(facts, prediction)) continue;
      if (prediction.unknown) {
        findings.push(unknownTorchFinding(this, facts, prediction, prediction.unknown, devices[0]!.cc));
        continue;
      }
      const cuda = prediction.builds.filter((build) => build.cuda !== null);
      if (cuda.length === 0) continue;
      for (const { cc, name } of devices) {
        const verdicts = cuda.map((build) => ({ build, coverage: coverageFor(build.archList, cc) }));
        if (verdicts.every((v) => v.coverage.how === "sass")) continue;
        const none = verdicts.filter((v) => v.coverage.how === "none");
        const sass = verdicts.filter((v) => v.coverage.how === "sass");
        const gpu = `${name} (compute capability ${formatComputeCapability(cc)})`;
        const sm = smName(cc);
        const builds = verdicts.map((v) => v.build.label).join(" or ");
        let message: string;
        if (none.length === verdicts.length)
          message = `${prediction.command} would install ${builds}, compiled for ${verdicts[0]!.build.archList.join(", ")}: none of it runs on ${gpu}, so CUDA kernels fail with "no kernel image is available for execution on the device".`;
        else if (sass.length === 0)
          message = `${prediction.command} would install ${builds}, which has no ${sm} code: it runs on ${gpu} only by JIT-compiling ${verdicts.find((v) => v.coverage.how === "ptx-jit")?.coverage.via[0]} PTX, slowly at first and without the kernels tuned for this GPU (a GB10 user measured SDPA at 0.55x of manual attention this way).`;
        else
          message = `${prediction.command} would install one of ${builds}; only ${sass.map((v) => v.build.label).join(", ")} has ${sm}-capable SASS, and which one the solver takes is not fixed by the manifest.`;
        findings.push(
          makeFinding(this, {
            severity: none.length === verdicts.length ? "error" : "warning",
            message,
            evidence: [
              ...predictionEvidence(prediction),
              ...verdicts.map((v) =>
                ev(
                  v.build.label,
                  `${v.build.archList.join(" ")} -> ${v.coverage.how === "none" ? "no code" : v.coverage.how === "ptx-jit" ? `PTX JIT (${v.coverage.via[0]})` : `SASS (${v.coverage.via[0]})`}`,
                ),
              ),
              ev("GPU", gpu),
              ev("driver", facts.host.nvidia.driverVersion),
              ev("CPU architecture", facts.host.cpuArch),
            ],
            fix: installFix(facts, kb, prediction, cc),
          }),
        );
        break;
      }
    }
    return findings;
  },
};
