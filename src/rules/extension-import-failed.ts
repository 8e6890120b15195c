/** A GPU extension (xformers, flash_attn, ...) is installed but fails to import; the cause from its error. */
import type { Evidence, Fix, Rule } from "../findings/types.js";
import type { ExtensionImport, Facts } from "../facts/schema.js";
import { normalizeName } from "../util/package-name.js";
import { ev, findingsOf } from "../findings/finding.js";
import { installCommand, reinstallCommands } from "../rule-helpers/reinstall-fix.js";
import { deviceCapabilities, pythonCmd } from "../rule-helpers/view.js";
import { EXTENSION_IMPORT_FAILED, judgeExtensionImport, lastLine } from "../judge/extension-import.js";

/** doctor's fix for a known cause (the causes and their words are in src/judge/extension-import.ts). */
interface CauseFix {
  summary: string;
  commands: (ext: ExtensionImport, facts: Facts, torchVersion: string | null) => string[];
}

/**
 * Reinstall the extension without touching torch (--no-deps). "for-this-gpu": build it with
 * --no-binary for this GPU (its wheel lacks the arch: there is one, even if no fact names it);
 * "against-this-torch": build it with --no-binary against the installed torch.
 */
const reinstall = (
  ext: ExtensionImport,
  facts: Facts,
  how: "wheel" | "for-this-gpu" | "against-this-torch",
) => {
  const gpu = deviceCapabilities(facts)[0]?.cc ?? (how === "for-this-gpu" ? "ask-torch" : null);
  return reinstallCommands(facts, {
    name: ext.distribution ?? ext.module,
    version: ext.version,
    sourceBuild: how === "wheel" ? null : { gpu },
    noDeps: true,
  });
};

/** By the cause id the shared judgment names. */
const FIXES: Record<string, CauseFix> = {
  "undefined-symbol": {
    summary: "Install the build of the extension made for this torch, or rebuild it against this torch.",
    commands: (ext, facts, torch) => [
      `# installed torch is ${torch ?? "?"}`,
      ...reinstall(ext, facts, "against-this-torch"),
    ],
  },
  "numpy-abi": {
    summary: "Follow numpy-abi-mismatch: NumPy 1.x, or a release of the extension built for NumPy 2.",
    commands: (_ext, facts) => [installCommand(facts, ['"numpy<2"'])],
  },
  "arch-missing": {
    summary:
      "Install a build of the extension that includes this GPU's sm_ target, or build it from source for it.",
    commands: (ext, facts) => reinstall(ext, facts, "for-this-gpu"),
  },
  "cuda-library-missing": {
    summary: "Install the extension's build for this torch's CUDA version.",
    commands: (ext, facts) => reinstall(ext, facts, "wheel"),
  },
  "torch-missing": {
    summary: "Install torch in this environment first.",
    commands: (_ext, facts) => [`${pythonCmd(facts)} -m pip install torch`],
  },
};

type Judgment = ReturnType<typeof judgeExtensionImport>;

/** What one extension's import showed and what to do, by how it ended: a crash, a hang, or an error. */
function evidenceAndFix(
  ext: ExtensionImport,
  facts: Facts,
  judgment: Judgment,
  torchVersion: string | null,
): { evidence: Evidence[]; fix: Fix } {
  const python = facts.python.interpreter.executable;
  const evidence = [
    ev("module", `${ext.module}${ext.distribution ? ` (${ext.distribution} ${ext.version ?? ""})` : ""}`),
    ev("status", ext.status),
    ev("torch", torchVersion),
  ];
  if (ext.status === "crash")
    return {
      evidence: [
        ...evidence,
        ev("signal / exit code", `${ext.signal ?? "-"} / ${ext.exitCode ?? "-"}`),
        ev("stderr (tail)", ext.stderrTail),
      ],
      fix: {
        summary: "Reinstall the extension's build for this torch and CUDA.",
        commands: reinstall(ext, facts, "wheel"),
      },
    };
  if (ext.status === "timeout")
    return {
      evidence: [...evidence, ev("stderr (tail)", ext.stderrTail)],
      fix: {
        summary: "Import it by hand with a traceback on hang to see where it waits.",
        commands: [`timeout -s INT 120 ${python} -X faulthandler -c "import ${ext.module}"`],
      },
    };
  if (judgment.verdict !== "pass" && judgment.verdict !== "skip")
    evidence.push(ev("error", lastLine(ext.error) || lastLine(ext.stderrTail)));
  const known = judgment.cause ? FIXES[judgment.cause] : undefined;
  return {
    evidence,
    fix: known
      ? { summary: known.summary, commands: known.commands(ext, facts, torchVersion) }
      : {
          summary: "Reproduce the import and read the traceback.",
          commands: [`${python} -c "import ${ext.module}"`],
        },
  };
}

export const extensionImportFailed: Rule = {
  ...EXTENSION_IMPORT_FAILED,
  check(facts) {
    const torchVersion = facts.python.torch?.version ?? null;
    return facts.python.extensions.flatMap((ext) => {
      // Judged with validate's check.extension.<module> in src/judge/extension-import.ts.
      const judgment = judgeExtensionImport({ module: ext.module, run: ext });
      // The probe imports known extensions only when their files are there, and modules named
      // with --import-check always: "No module named" then means a broken install or a typo.
      const subject = normalizeName(ext.distribution ?? ext.module);
      return findingsOf(this, judgment, {
        ...evidenceAndFix(ext, facts, judgment, torchVersion),
        cause: judgment.cause ?? undefined,
        subject,
      });
    });
  },
};
