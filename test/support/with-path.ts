/** Tests that put stand-in tools (nvidia-smi, docker, ssh) first on PATH. */
/** Runs `fn` with PATH set to `path`, and puts PATH back whatever happens. */
export async function withPath<T>(path: string, fn: () => Promise<T>): Promise<T> {
  const saved = process.env["PATH"];
  process.env["PATH"] = path;
  try {
    return await fn();
  } finally {
    process.env["PATH"] = saved;
  }
}
