/**
 * A GPU extension (xformers, flash_attn, ...) imported in its own child process, judged once for
 * doctor (rule extension-import-failed, the probe's child) and validate (check.extension.<module>,
 * the payload's): the cause read from its error. A hang is a warning (it may be a first-import
 * JIT build that would finish); a crash or an error is an error.
 */
import type { Judgment } from "./vocabulary.js";
import type { JudgedChildRun } from "./child-run.js";

export const EXTENSION_IMPORT_FAILED = {
  id: "extension-import-failed",
  title: "An installed extension fails to import",
  severity: "error",
} as const;

/** Known causes, first match wins, the most specific first. Their fixes are doctor's: they need the environment. */
const IMPORT_ERROR_CAUSES: { pattern: RegExp; id: string; cause: string }[] = [
  {
    pattern: /undefined symbol/i,
    id: "undefined-symbol",
    cause: "it was built against another torch version (a C++ symbol it needs is not in this torch)",
  },
  {
    pattern: /compiled using NumPy 1\.x|_ARRAY_API not found/i,
    id: "numpy-abi",
    cause: "it was compiled against NumPy 1.x and NumPy 2 is installed (see numpy-abi-mismatch)",
  },
  {
    // The same cause as extension-arch-missing's: merged with it when the binary scan saw it too.
    pattern: /no kernel image is available/i,
    id: "arch-missing",
    cause: "it has no code for this GPU's architecture",
  },
  {
    pattern: /lib(cudart|cublas|cudnn|nvrtc|cusparse)[\w.]*\.so[\w.]*: cannot open shared object file/i,
    id: "cuda-library-missing",
    cause: "it links against CUDA libraries of another CUDA version than this environment has",
  },
  {
    pattern: /No module named 'torch'/,
    id: "torch-missing",
    cause: "torch is not importable in this environment",
  },
];

interface ExtensionImportInput {
  module: string;
  run: JudgedChildRun & { stderrTail: string | null };
}

interface ExtensionImportJudgment extends Judgment {
  /** The stable id of the cause (Finding.cause): a known one, import-crash, import-hang or import-error. */
  cause: string | null;
}

export function lastLine(text: string | null): string {
  return (text ?? "").trim().split("\n").slice(-1)[0] ?? "";
}

export function judgeExtensionImport(input: ExtensionImportInput): ExtensionImportJudgment {
  const { id } = EXTENSION_IMPORT_FAILED;
  const { module, run } = input;
  if (run.status === "ok") return { id, verdict: "pass", message: `import ${module} works`, cause: null };
  if (run.status === "skipped")
    return { id, verdict: "skip", message: `${module} was not imported`, cause: null };
  if (run.status === "crash")
    return {
      id,
      verdict: "error",
      message: `import ${module} crashed the interpreter (signal ${run.signal ?? run.exitCode ?? "?"}): usually a binary built for another torch/CUDA, or a broken install.`,
      cause: "import-crash",
    };
  if (run.status === "timeout")
    return {
      id,
      verdict: "warning",
      message: `import ${module} did not finish within ${Math.round(run.durationMs / 1000)} s (hung: a JIT build on first import, a lock, or a stuck GPU).`,
      cause: "import-hang",
    };
  const known = IMPORT_ERROR_CAUSES.find((c) =>
    c.pattern.test(`${run.error ?? ""}\n${run.stderrTail ?? ""}`),
  );
  return {
    id,
    verdict: "error",
    message: `import ${module} fails: ${known ? known.cause : lastLine(run.error) || "see the error"}.`,
    cause: known?.id ?? "import-error",
  };
}
