/** Where the probe runs: this machine, a running container, an image, or a host over ssh. */
export interface RunResult {
  stdout: string;
  stderr: string;
  /** Exit status; null when the process was killed by a signal. */
  code: number | null;
  signal: string | null;
  /** True when we killed it at the time limit. */
  timedOut: boolean;
  /** Present when a stream passed its cap: only its head was kept. */
  truncated?: { stdout: boolean; stderr: boolean };
}

export interface PythonRunOptions {
  /** Written to the child's fd 3, which is then closed at our end (the payload frame's nonce). */
  secret?: string;
}

export interface Transport {
  kind: "local" | "container" | "image" | "ssh" | "slurm" | "kube";
  /** Container name, image ref or ssh host; null for local. */
  ref: string | null;
  /** The Python command run there ("python3", "/opt/venv/bin/python"). */
  python: string;
  /** Human words for messages: "python3 on this machine", "python3 in container web". */
  describe(): string;
  /**
   * Runs `python - ...args` there with `script` on stdin. Throws UserError when it cannot start.
   * `options.secret` is for transports that can hand it over on a pipe of its own (the local
   * one, at fd 3; transports/payload-frame.ts); the others ignore it.
   */
  runPython(
    script: string,
    args: string[],
    timeoutMs: number,
    options?: PythonRunOptions,
  ): Promise<RunResult>;
  /**
   * Runs a program there (nvidia-smi; an interpreter with a file of this machine), stdin empty.
   * A program missing on this machine rejects with CommandNotFoundError; inside a container or
   * on an ssh host it is a result (exit 127), since only the shell there knows.
   */
  runProgram(command: string, args: string[], timeoutMs: number): Promise<RunResult>;
}
