/**
 * `import torch` in a child process, judged once for doctor (rule torch-import-failed, the
 * probe's child) and validate (check.torch-import, the payload's): raised, crashed or hung.
 */
import type { Judgment } from "./vocabulary.js";
import type { JudgedChildRun } from "./child-run.js";

export const TORCH_IMPORT_FAILED = {
  id: "torch-import-failed",
  title: "import torch fails",
  severity: "error",
} as const;

interface TorchImportInput {
  /** The child that imported torch, as both payloads report it. */
  run: JudgedChildRun;
  /**
   * The torch that was imported (or found on disk before the import): its version and where; only
   * a passing import names it, as validate knows it only from a successful one. false when torch is
   * not installed at all (another rule's matter); null when not known.
   */
  torch: { version: string; location: string } | false | null;
}

export function judgeTorchImport(input: TorchImportInput): Judgment {
  const { id } = TORCH_IMPORT_FAILED;
  const { run, torch } = input;
  if (torch === false) return { id, verdict: "skip", message: "torch is not installed" };
  if (run.status === "ok")
    return {
      id,
      verdict: "pass",
      message: torch ? `import torch works: ${torch.version} from ${torch.location}` : "import torch works",
    };
  if (run.status === "skipped") return { id, verdict: "skip", message: "torch was not imported" };
  const what =
    run.status === "crash"
      ? `crashed (signal ${run.signal ?? "?"}, exit ${run.exitCode ?? "?"})`
      : run.status === "timeout"
        ? `did not finish within ${Math.round(run.durationMs / 1000)} s`
        : `raised: ${(run.error ?? "").split("\n").slice(-1)[0] ?? ""}`;
  return { id, verdict: TORCH_IMPORT_FAILED.severity, message: `import torch ${what}.` };
}
