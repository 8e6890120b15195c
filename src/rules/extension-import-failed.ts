/** A GPU extension (xformers, flash_attn, ...) is installed but fails to import; the cause from its error. */
import type { Finding, Rule } from "../rule-helpers/types.js";
import type { ExtensionImport, Facts } from "../facts/schema.js";
import { normalizeName } from "../util/package-name.js";
import { ev, makeFinding } from "../rule-helpers/finding.js";
import { installCommand, reinstallCommands } from "../rule-helpers/reinstall-fix.js";
import { deviceCapabilities, pythonCmd } from "../rule-helpers/view.js";

interface Cause {
  /** Stable id, carried on the finding (Finding.cause). */
  id: string;
  cause: string;
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

/** First matching pattern wins; ordered from the most specific. */
const CAUSES: { pattern: RegExp; make: Cause }[] = [
  {
    pattern: /undefined symbol/i,
    make: {
      id: "undefined-symbol",
      cause: "it was built against another torch version (a C++ symbol it needs is not in this torch)",
      summary: "Install the build of the extension made for this torch, or rebuild it against this torch.",
      commands: (ext, facts, torch) => [
        `# installed torch is ${torch ?? "?"}`,
        ...reinstall(ext, facts, "against-this-torch"),
      ],
    },
  },
  {
    pattern: /compiled using NumPy 1\.x|_ARRAY_API not found/i,
    make: {
      id: "numpy-abi",
      cause: "it was compiled against NumPy 1.x and NumPy 2 is installed (see numpy-abi-mismatch)",
      summary: "Follow numpy-abi-mismatch: NumPy 1.x, or a release of the extension built for NumPy 2.",
      commands: (_ext, facts) => [installCommand(facts, ['"numpy<2"'])],
    },
  },
  {
    pattern: /no kernel image is available/i,
    make: {
      // The same cause as extension-arch-missing's: merged with it when the binary scan saw it too.
      id: "arch-missing",
      cause: "it has no code for this GPU's architecture",
      summary:
        "Install a build of the extension that includes this GPU's sm_ target, or build it from source for it.",
      commands: (ext, facts) => reinstall(ext, facts, "for-this-gpu"),
    },
  },
  {
    pattern: /lib(cudart|cublas|cudnn|nvrtc|cusparse)[\w.]*\.so[\w.]*: cannot open shared object file/i,
    make: {
      id: "cuda-library-missing",
      cause: "it links against CUDA libraries of another CUDA version than this environment has",
      summary: "Install the extension's build for this torch's CUDA version.",
      commands: (ext, facts) => reinstall(ext, facts, "wheel"),
    },
  },
  {
    pattern: /No module named 'torch'/,
    make: {
      id: "torch-missing",
      cause: "torch is not importable in this environment",
      summary: "Install torch in this environment first.",
      commands: (_ext, facts) => [`${pythonCmd(facts)} -m pip install torch`],
    },
  },
];

function lastLine(text: string | null): string {
  return (text ?? "").trim().split("\n").slice(-1)[0] ?? "";
}

export const extensionImportFailed: Rule = {
  id: "extension-import-failed",
  title: "An installed extension fails to import",
  severity: "error",
  check(facts) {
    const python = facts.python.interpreter.executable;
    const torchVersion = facts.python.torch?.version ?? null;
    const findings: Finding[] = [];
    for (const ext of facts.python.extensions) {
      if (ext.status === "ok" || ext.status === "skipped") continue;
      const text = `${ext.error ?? ""}\n${ext.stderrTail ?? ""}`;
      // The probe imports known extensions only when their files are there, and modules named
      // with --import-check always: "No module named" then means a broken install or a typo.
      const subject = normalizeName(ext.distribution ?? ext.module);
      const evidence = [
        ev("module", `${ext.module}${ext.distribution ? ` (${ext.distribution} ${ext.version ?? ""})` : ""}`),
        ev("status", ext.status),
        ev("torch", torchVersion),
      ];
      if (ext.status === "crash") {
        evidence.push(
          ev("signal / exit code", `${ext.signal ?? "-"} / ${ext.exitCode ?? "-"}`),
          ev("stderr (tail)", ext.stderrTail),
        );
        findings.push(
          makeFinding(this, {
            message: `import ${ext.module} crashed the interpreter (signal ${ext.signal ?? ext.exitCode ?? "?"}): usually a binary built for another torch/CUDA, or a broken install.`,
            evidence,
            fix: {
              summary: "Reinstall the extension's build for this torch and CUDA.",
              commands: reinstall(ext, facts, "wheel"),
            },
            cause: "import-crash",
            subject,
          }),
        );
        continue;
      }
      if (ext.status === "timeout") {
        findings.push(
          makeFinding(this, {
            severity: "warning",
            message: `import ${ext.module} did not finish within ${Math.round(ext.durationMs / 1000)} s (hung: a JIT build on first import, a lock, or a stuck GPU).`,
            evidence: [...evidence, ev("stderr (tail)", ext.stderrTail)],
            fix: {
              summary: "Import it by hand with a traceback on hang to see where it waits.",
              commands: [`timeout -s INT 120 ${python} -X faulthandler -c "import ${ext.module}"`],
            },
            cause: "import-hang",
            subject,
          }),
        );
        continue;
      }
      const known = CAUSES.find((c) => c.pattern.test(text));
      evidence.push(ev("error", lastLine(ext.error) || lastLine(ext.stderrTail)));
      findings.push(
        makeFinding(this, {
          message: `import ${ext.module} fails: ${known ? known.make.cause : lastLine(ext.error) || "see the error"}.`,
          evidence,
          fix: known
            ? { summary: known.make.summary, commands: known.make.commands(ext, facts, torchVersion) }
            : {
                summary: "Reproduce the import and read the traceback.",
                commands: [`${python} -c "import ${ext.module}"`],
              },
          cause: known?.make.id ?? "import-error",
          subject,
        }),
      );
    }
    return findings;
  },
};
