/**
 * An installed package declares (Requires-Dist) a torch or triton version that is not the one
 * installed: torchvision / torchaudio / xformers / vllm built for another torch (F06, F07), or a
 * triton that is not the one torch pins (F38). Their compiled parts were built against that exact
 * version, so the mismatch shows up later as "operator torchvision::nms does not exist",
 * "undefined symbol" (F30) or "cannot import name 'triton_key'". This is what `pip check` reports,
 * judged before anything is imported.
 *
 * Only exact pins (==X, ==X.*) count: they mark binaries built against one version, as the catalog
 * (R02) says; a range (accelerate's torch>=2.0) is `pip check`'s business, not a build mismatch.
 * One finding per required package (torch, triton): several packages built for another torch are
 * one cause. Lines with markers that cannot be evaluated (extras) are skipped.
 */
import type { Distribution, DistRequirement, Facts } from "../facts/schema.js";
import type { KnowledgeBase } from "../kb/index.js";
import type { Finding, Fix, Rule } from "../findings/types.js";
import { ev, makeFinding } from "../findings/finding.js";
import { satisfies } from "../util/pep440.js";
import { evaluateMarker } from "../util/pep508-marker.js";
import { localTag, majorMinor } from "../util/version.js";
import { installCommands } from "../kb/queries/torch.js";
import { platformOfCpu } from "../project/install-prediction.js";
import { cudaIndexTag } from "../rule-helpers/torch-build-advice.js";
import { pythonCmd, shellQuote } from "../rule-helpers/view.js";

interface Conflict {
  dependent: Distribution;
  requirement: DistRequirement;
}

/** The copy of each distribution that imports win: the lowest sys.path index. */
function importedDistributions(facts: Facts): Map<string, Distribution> {
  const byName = new Map<string, Distribution>();
  for (const dist of facts.python.distributions) {
    const seen = byName.get(dist.normalizedName);
    if (!seen || dist.pathIndex < seen.pathIndex) byName.set(dist.normalizedName, dist);
  }
  return byName;
}

/** The installed version of a required package; torch read from its own files where known. */
function installedVersion(facts: Facts, dists: Map<string, Distribution>, name: string): string | null {
  if (name === "torch" && facts.python.torch) return facts.python.torch.version;
  return dists.get(name)?.version ?? null;
}

/** "==2.4.0", "==2.4.*": one version (series); "===X" is left to satisfies(), which cannot read it. */
function isExactPin(specifier: string): boolean {
  return /^==[^=,]+$/.test(specifier);
}

function applies(requirement: DistRequirement, facts: Facts): boolean {
  if (requirement.marker === null) return true;
  if (!/linux/i.test(facts.host.os.system)) return false;
  return (
    evaluateMarker(requirement.marker, {
      platform_machine: facts.host.cpuArch,
      sys_platform: "linux",
      platform_system: "Linux",
      os_name: "posix",
      python_version: majorMinor(facts.python.interpreter.version),
    }) === true
  );
}

/** pip, uv pip or conda, as the interpreter and the installed package say. */
function installer(facts: Facts, installed: Distribution | undefined): "pip" | "uv" | "conda" {
  const kind = facts.python.interpreter.kind;
  const by = installed?.installer?.trim().toLowerCase() ?? null;
  if (kind === "conda" && by === "conda") return "conda";
  if (kind === "uv" || by === "uv") return "uv";
  return "pip";
}

/** The install line for `name<specifier>`; for torch, from the index of the installed build's variant. */
function installLine(facts: Facts, kb: KnowledgeBase, name: string, specifier: string, tool: string): string {
  const python = pythonCmd(facts);
  const exact = /^==([^,*]+)$/.exec(specifier)?.[1] ?? null;
  if (tool === "conda") {
    const condaName = name === "torch" ? "pytorch" : name;
    return `conda install -p ${shellQuote(facts.python.interpreter.prefix)} ${shellQuote(`${condaName}${exact ? `==${exact}` : specifier}`)}`;
  }
  const torch = facts.python.torch;
  const variant = torch
    ? (localTag(torch.version) ?? (torch.cudaVersion ? cudaIndexTag(torch.cudaVersion) : "cpu"))
    : null;
  const platform = platformOfCpu(facts.host.cpuArch);
  const build =
    name === "torch" && exact && variant && platform ? kb.torchBuild(exact, variant, platform) : null;
  if (build) {
    const { pip, uv } = installCommands(build, exact ?? undefined, true);
    return tool === "uv"
      ? uv.replace(/^uv pip install /, `uv pip install --python ${python} `)
      : `${python} -m ${pip}`;
  }
  const requirement = `"${name}${specifier}"`;
  return tool === "uv"
    ? `uv pip install --python ${python} ${requirement}`
    : `${python} -m pip install ${requirement}`;
}

function fixFor(
  facts: Facts,
  kb: KnowledgeBase,
  name: string,
  conflicts: Conflict[],
  installedDist: Distribution | undefined,
): Fix {
  const specifiers = [...new Set(conflicts.map((c) => c.requirement.specifier))];
  const tool = installer(facts, installedDist);
  const dependents = conflicts.map((c) => `${c.dependent.name} ${c.dependent.version}`).join(", ");
  if (specifiers.length > 1)
    return {
      summary: `${dependents} ask for different ${name} versions (${specifiers.join(" vs ")}): install the releases of them built for one ${name}, together, from one index.`,
      commands: [`${pythonCmd(facts)} -m pip check`],
    };
  const specifier = specifiers[0]!;
  return {
    summary:
      name === "torch"
        ? `Install the torch that ${dependents} ${conflicts.length > 1 ? "were" : "was"} built for (${name}${specifier}), from the index of the installed build, or install releases of ${conflicts.map((c) => c.dependent.name).join(", ")} made for the installed torch instead.`
        : `Install the ${name} that ${dependents} pins (${name}${specifier}).`,
    commands: [installLine(facts, kb, name, specifier, tool)],
  };
}

/** Distributions that install the `triton` module; names differ, so duplicate-distributions misses them (F38, pytorch#128357). */
const TRITON_PROVIDERS = ["triton", "triton-nightly", "pytorch-triton"];

/** The uninstall line for this environment's installer. */
function uninstallLine(facts: Facts, tool: "pip" | "uv" | "conda", names: string[]): string {
  const python = pythonCmd(facts);
  if (tool === "conda")
    return `conda remove -p ${shellQuote(facts.python.interpreter.prefix)} ${names.join(" ")}`;
  if (tool === "uv") return `uv pip uninstall --python ${python} ${names.join(" ")}`;
  return `${python} -m pip uninstall -y ${names.join(" ")}`;
}

/** Several triton distributions at once, with any pin torch has on one of them: remove all, install the pinned one. */
function tritonProvidersFinding(
  rule: Rule,
  facts: Facts,
  kb: KnowledgeBase,
  dists: Map<string, Distribution>,
  providers: string[],
  conflicts: Conflict[],
): Finding {
  const pin =
    conflicts[0]?.requirement ??
    (dists.get("torch")?.requires ?? []).find(
      (r) => providers.includes(r.normalizedName) && isExactPin(r.specifier) && applies(r, facts),
    ) ??
    null;
  const first = dists.get(providers[0]!);
  const tool = installer(facts, first);
  const installed = providers.map((name) => `${name} ${dists.get(name)!.version}`).join(", ");
  return makeFinding(rule, {
    message:
      `${installed} are all installed and each puts a \`triton\` module in place, so which one imports depends on install order` +
      (conflicts.length > 0
        ? `; ${conflicts.map((c) => `${c.dependent.name} ${c.dependent.version} requires ${c.requirement.raw}`).join("; ")}`
        : "") +
      `: torch.compile fails with "cannot import name 'triton_key'" or TritonMissing.`,
    evidence: [
      ...providers.map((name) =>
        ev(`installed ${name}`, `${dists.get(name)!.version} at ${dists.get(name)!.location}`),
      ),
      ...conflicts.map((c) =>
        ev(`${c.dependent.name} ${c.dependent.version} Requires-Dist`, c.requirement.raw),
      ),
    ],
    fix: {
      summary: pin
        ? `Remove every triton distribution, then install the one torch pins (${pin.normalizedName}${pin.specifier}).`
        : "Remove every triton distribution, then install the one torch requires (`pip show torch` lists it).",
      commands: [
        uninstallLine(facts, tool, providers),
        ...(pin ? [installLine(facts, kb, pin.normalizedName, pin.specifier, tool)] : []),
      ],
    },
  });
}

export const installedTorchPinConflict: Rule = {
  id: "installed-torch-pin-conflict",
  title: "An installed package was built for another torch or triton",
  severity: "error",
  check(facts, kb) {
    const dists = importedDistributions(facts);
    const byRequired = new Map<string, Conflict[]>();
    for (const dependent of dists.values()) {
      for (const requirement of dependent.requires ?? []) {
        if (!isExactPin(requirement.specifier) || !applies(requirement, facts)) continue;
        const version = installedVersion(facts, dists, requirement.normalizedName);
        // Not installed at all is another problem (pip check's "not installed"); unreadable specifiers are unknown.
        if (version === null || satisfies(version, requirement.specifier) !== false) continue;
        const list = byRequired.get(requirement.normalizedName) ?? [];
        list.push({ dependent, requirement });
        byRequired.set(requirement.normalizedName, list);
      }
    }
    const findings: Finding[] = [];
    const providers = TRITON_PROVIDERS.filter((name) => dists.has(name));
    // Several distributions installing the `triton` module: one cause with a triton pin conflict, so one finding.
    const tritonShared = providers.length > 1 ? providers : [];
    if (tritonShared.length > 0 && !tritonShared.some((name) => byRequired.has(name)))
      findings.push(tritonProvidersFinding(this, facts, kb, dists, tritonShared, []));
    for (const [name, conflicts] of byRequired) {
      if (tritonShared.includes(name)) {
        findings.push(tritonProvidersFinding(this, facts, kb, dists, tritonShared, conflicts));
        continue;
      }
      const installed = installedVersion(facts, dists, name)!;
      const installedDist = dists.get(name);
      findings.push(
        makeFinding(this, {
          message:
            `${conflicts.map((c) => `${c.dependent.name} ${c.dependent.version} requires ${c.requirement.raw}`).join("; ")}, ` +
            `but ${name} ${installed} is installed: its compiled parts were built for the other version and fail at import or first use ` +
            `(${name === "torch" ? '"undefined symbol", "operator torchvision::nms does not exist"' : "\"cannot import name 'triton_key'\", TritonMissing"}).`,
          evidence: [
            ...conflicts.map((c) =>
              ev(`${c.dependent.name} ${c.dependent.version} Requires-Dist`, c.requirement.raw),
            ),
            ev(`installed ${name}`, `${installed}${installedDist ? ` at ${installedDist.location}` : ""}`),
          ],
          fix: fixFor(facts, kb, name, conflicts, installedDist),
        }),
      );
    }
    return findings;
  },
};
