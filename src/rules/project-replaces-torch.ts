/**
 * Installing the project would replace the torch already installed here with another build
 * (another CUDA variant, a CPU build, another release) although the installed version satisfies
 * the project's pin: `uv sync` installs exactly what the project resolves to, and a pinned local
 * version (+cu124) or wheel URL makes pip replace it too. A pin the installed version does not
 * meet is project-torch-pin-mismatch's; an NGC container's torch is uv-sync-replaces-torch's.
 */
import { join } from "node:path";
import type { Rule } from "../findings/types.js";
import { ev, makeFinding } from "../findings/finding.js";
import { satisfies } from "../util/pep440.js";
import { localTag, majorMinor } from "../util/version.js";
import { envVar, ngcMarker } from "../rule-helpers/view.js";
import { predictTorchInstalls, type InstallPrediction } from "../project/install-prediction.js";
import { cudaIndexTag } from "../rule-helpers/torch-build-advice.js";

/** "cu130", "cpu": the local tag, else from the CUDA torch was built with. */
function installedVariant(version: string, cudaVersion: string | null): string {
  const tag = localTag(version);
  if (tag && /^(cu\d+|cpu)$/.test(tag)) return tag;
  return cudaVersion ? cudaIndexTag(cudaVersion) : "cpu";
}

/** Does this install act on the interpreter doctor looked at? */
function targetsThisEnvironment(
  prediction: InstallPrediction,
  prefix: string,
  projectDir: string,
  uvEnv: string | undefined,
): boolean {
  if (prediction.tool === "pip") return true;
  if (prediction.tool === "uv") return prefix === (uvEnv ?? join(projectDir, ".venv"));
  return false;
}

export const projectReplacesTorch: Rule = {
  id: "project-replaces-torch",
  title: "Installing the project would replace the installed torch with another build",
  severity: "warning",
  check(facts, kb) {
    const torch = facts.python.torch;
    if (!torch || !facts.project || ngcMarker(facts)) return [];
    const have = installedVariant(torch.version, torch.cudaVersion);
    const prefix = facts.python.interpreter.prefix;
    const uvEnv = envVar(facts, "UV_PROJECT_ENVIRONMENT");
    const findings = [];
    for (const prediction of predictTorchInstalls(facts, kb)) {
      if (prediction.ecosystem !== "pypi" || !prediction.exact || prediction.builds.length === 0) continue;
      if (!targetsThisEnvironment(prediction, prefix, facts.project.dir, uvEnv)) continue;
      // An unmet version pin is project-torch-pin-mismatch's finding.
      if (prediction.specifier && satisfies(torch.version, prediction.specifier) === false) continue;
      const build = prediction.builds[0]!;
      const want = prediction.variant ?? (build.cuda ? cudaIndexTag(build.cuda) : "cpu");
      const sameSeries = majorMinor(torch.version) === build.torch;
      const sameExact =
        prediction.exactVersion === null ||
        prediction.exactVersion.split("+")[0] === torch.version.split("+")[0];
      if (want === have && sameSeries && sameExact) continue;
      const target = prediction.exactVersion ?? `${build.torch}.x`;
      findings.push(
        makeFinding(this, {
          message:
            `torch ${torch.version} (${have}) is installed here, and ${prediction.command} would replace it with torch ${target} (${want}) from ` +
            `${build.label}${prediction.how ? `: ${prediction.how}` : ""}. The installed build is lost on the next ${prediction.tool === "uv" ? "uv sync / uv run" : "install"}.`,
          evidence: [
            ev(
              "installed torch",
              `${torch.version} (CUDA ${torch.cudaVersion ?? "none"}) at ${torch.location}`,
            ),
            ev("install", `${prediction.command} (${prediction.manifest})`),
            ...prediction.lines.map((line) => ev(line.origin, line.text)),
            ev("would install", `${build.label}: ${build.archList.join(" ") || "CPU only"}`),
          ],
          fix: {
            summary:
              "Decide which torch the project should have: point its manifest at the installed build, or let the install replace it on purpose" +
              (prediction.tool === "uv" ? " (UV_NO_SYNC=1 keeps `uv run` from syncing meanwhile)." : "."),
            commands: [
              ...prediction.lines
                .filter((line) => /https?:\/\//.test(line.text) && !/uv\.lock$/.test(line.origin))
                .map(
                  (line) =>
                    `# ${line.origin}: ${line.text}  ->  ${line.text.replace(/https?:\/\/\S+?(?=["\s]|$)/, `https://download.pytorch.org/whl/${have}`)}`,
                ),
              ...(prediction.tool === "uv"
                ? [
                    "uv lock --upgrade-package torch",
                    "export UV_NO_SYNC=1   # until the manifest says what you want",
                  ]
                : []),
            ],
          },
        }),
      );
    }
    return findings;
  },
};
