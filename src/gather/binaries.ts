/**
 * The binary half of gathering: which CUDA code the environment's shared libraries carry, read by
 * the fatbin scanner from the local filesystem. Runs beside the probe (it is I/O, the probe is
 * mostly torch's import), so it adds little to doctor's wall time.
 */
import type { BinariesFacts } from "../facts/schema.js";
import { scanEnvironmentBinaries } from "../fatbin/index.js";
import type { Transport } from "../transports/types.js";
import { CWD_IMPORT_GUARD } from "../transports/python-guard.js";

export function notScanned(reason: string): BinariesFacts {
  return { scanned: false, reason, durationMs: 0, files: [], filesExamined: 0 };
}

/**
 * The sys.path directories the transport's interpreter imports from, without the standard library
 * (which holds no CUDA code): site-packages, PYTHONPATH entries, user site.
 *
 * doctor asks this beside the probe, not from the probe's sys.path in Facts: waiting for the probe
 * (torch's import, seconds) would put the whole binary scan after it, on doctor's wall time,
 * where a second interpreter start costs tens of ms of CPU beside it.
 */
export async function importDirectories(transport: Transport): Promise<string[]> {
  const script =
    `${CWD_IMPORT_GUARD}\n` +
    "import json, os, sysconfig\n" +
    "std = {os.path.realpath(sysconfig.get_paths()[k]) for k in ('stdlib', 'platstdlib')}\n" +
    "dirs = [p for p in sys.path if p and os.path.isdir(p)]\n" +
    "print(json.dumps([p for p in dirs if os.path.realpath(p) not in std and not os.path.realpath(p).endswith('lib-dynload')]))";
  // `-c`, not the script on stdin: -v then shows the query's first line, and a missing
  // interpreter rejects as not found for the caller to word.
  const result = await transport.runProgram(transport.python, ["-c", script], 30_000);
  if (result.code !== 0) {
    const why = result.timedOut ? "timed out" : `exit ${String(result.code ?? result.signal)}`;
    throw new Error(`${transport.python} ${why}: ${result.stderr.trim().split("\n").at(-1) ?? ""}`);
  }
  // The list is the last line: a sitecustomize may print before it.
  return JSON.parse(result.stdout.trim().split("\n").at(-1) ?? "") as string[];
}

export async function gatherBinaries(transport: Transport, fast: boolean): Promise<BinariesFacts> {
  if (fast) return notScanned("--fast: binaries not scanned");
  if (transport.kind !== "local")
    return notScanned(`the environment is not on this filesystem (${transport.kind})`);
  try {
    return await scanEnvironmentBinaries(await importDirectories(transport));
  } catch (error) {
    // The probe reports a broken interpreter with a proper message; here a failure only means
    // no binary facts.
    return notScanned(
      `could not list the interpreter's import directories: ${(error as Error).message.split("\n")[0]}`,
    );
  }
}
