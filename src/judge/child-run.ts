/** A child process's record as both payloads report it (the torch and import-check children of torch_env.py). */
export interface JudgedChildRun {
  status: "ok" | "error" | "crash" | "timeout" | "skipped";
  durationMs: number;
  exitCode: number | null;
  signal: string | null;
  error: string | null;
}
