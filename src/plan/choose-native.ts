/**
 * A native uv venv: torch from the PyTorch index variant whose wheels carry SASS for the GPU and
 * whose CUDA the driver runs, the newest such release the project's torch pin accepts.
 */
import type { Requirement } from "../facts/schema.js";
import type { KnowledgeBase, TorchBuildChoice } from "../kb/index.js";
import { satisfies } from "../util/pep440.js";
import { compareVersions, majorMinor } from "../util/version.js";
import { NEWEST_DRIVER } from "./choose-container.js";
import type { Decision, NativeChoice, TargetMachine } from "./types.js";

export interface NativeOutcome {
  choice: NativeChoice | null;
  requiredDriver: string | null;
  decisions: Decision[];
  /** Why native cannot work, when it cannot. */
  rejections: string[];
  /** The project's torch pin turned down, when no build it accepts runs here. */
  torchPinConflict: string | null;
}

/** Could some release of this series (2.7 -> 2.7.0 .. 2.7.30) satisfy the specifier? */
function seriesAccepts(series: string, specifier: string): boolean {
  for (let patch = 0; patch <= 30; patch++)
    if (satisfies(`${series}.${patch}`, specifier) === true) return true;
  return false;
}

function pythonFor(pythons: string[], wanted: string | null, requiresPython: string | null): string | null {
  const plain = pythons
    .filter((p) => /^\d+\.\d+$/.test(p))
    .sort(compareVersions)
    .reverse();
  if (wanted) return plain.includes(majorMinor(wanted)) ? majorMinor(wanted) : null;
  return plain.find((p) => requiresPython === null || satisfies(`${p}.0`, requiresPython) !== false) ?? null;
}

export function chooseNative(
  kb: KnowledgeBase,
  target: TargetMachine,
  torchRequirement: Requirement | null,
  wantedPython: string | null,
  requiresPython: string | null,
): NativeOutcome {
  const evaluation = kb.evaluateTorchBuilds({
    computeCapability: target.computeCapability,
    driverVersion: target.driverVersion ?? NEWEST_DRIVER,
    cpuArch: target.cpuArch,
  });
  const rejections = evaluation.rejected.map((r) => `torch ${r.build.torch} ${r.build.variant}: ${r.reason}`);
  const native = evaluation.choices.filter((c) => c.runs === "sass");
  for (const c of evaluation.choices.filter((c) => c.runs !== "sass"))
    rejections.push(
      `torch ${c.build.torch} ${c.build.variant}: only through PTX JIT (${c.via.join(", ")}), not native`,
    );
  const spec = torchRequirement?.specifier ?? "";
  const accepted = native.filter((c) => spec === "" || seriesAccepts(c.build.torch, spec));
  let torchPinConflict: string | null = null;
  let pool: TorchBuildChoice[] = accepted;
  if (accepted.length === 0 && native.length > 0 && torchRequirement) {
    torchPinConflict = `${torchRequirement.raw} (${torchRequirement.origin}): no build of that torch runs natively on compute capability ${target.computeCapability}; torch ${native[0]?.build.torch} ${native[0]?.build.variant} is planned instead`;
    pool = native;
  }
  for (const candidate of pool) {
    const python = pythonFor(candidate.build.pythons, wantedPython ?? target.python, requiresPython);
    if (!python) {
      rejections.push(
        `torch ${candidate.build.torch} ${candidate.build.variant}: no wheel for the Python wanted (${wantedPython ?? target.python ?? requiresPython ?? "any"})`,
      );
      continue;
    }
    const build = candidate.build;
    const toolkit = build.cuda ? kb.cudaToolkit(build.cuda) : null;
    const requiredDriver = toolkit?.minDriverLinux ?? NEWEST_DRIVER;
    const sources = [...build.sources.map((s) => s.url), ...(toolkit?.sources.map((s) => s.url) ?? [])];
    const decisions: Decision[] = [
      {
        topic: "torch",
        choice: `torch ${build.torch}.* from ${build.indexUrl} (${build.variant}, ${build.platform})`,
        // With the driver unknown the query ran for "any driver": say what it needs instead.
        reason: candidate.reasons
          .map((r) =>
            target.driverVersion === null && r.startsWith(`driver ${NEWEST_DRIVER} `)
              ? `CUDA ${build.cuda} needs driver ${requiredDriver} or newer`
              : r,
          )
          .join("; "),
        sources,
      },
      {
        topic: "python",
        choice: python,
        reason: wantedPython
          ? "asked with --python"
          : target.python
            ? `the target's Python is ${target.python}`
            : `newest Python with a ${build.variant} wheel${requiresPython ? ` that requires-python (${requiresPython}) accepts` : ""}`,
        sources: build.sources.map((s) => s.url),
      },
    ];
    if (target.driverVersion === null)
      decisions.push({
        topic: "driver",
        choice: `${requiredDriver} or newer`,
        reason: `the target's driver is not known (pass --driver to plan for yours); CUDA ${build.cuda} needs ${requiredDriver}, and setup-native.sh checks it`,
        sources: toolkit?.sources.map((s) => s.url) ?? [],
      });
    return {
      choice: {
        build,
        python,
        indexName: `pytorch-${build.variant}`,
        protected: [{ name: "torch", version: null, why: `torch ${build.torch} from ${build.indexUrl}` }],
      },
      requiredDriver,
      decisions,
      rejections,
      torchPinConflict,
    };
  }
  return { choice: null, requiredDriver: null, decisions: [], rejections, torchPinConflict };
}
