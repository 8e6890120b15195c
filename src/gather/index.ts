/**
 * gatherFacts: the one place gpuprep looks at the outside world. Runs the probe where the user
 * pointed (local interpreter, container, image, ssh host), reads the project's manifests, and
 * returns one Facts snapshot.
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import type { Facts } from "../facts/schema.js";
import { FACTS_SCHEMA_ID, FACTS_SCHEMA_VERSION } from "../facts/schema-id.js";
import { UserError } from "../errors.js";
import { makeEnvelope } from "../json-envelope.js";
import { localTransport } from "../transports/local.js";
import { containerTransport, imageTransport } from "../transports/docker.js";
import { sshTransport } from "../transports/ssh.js";
import type { Transport } from "../transports/types.js";
import { startProbe } from "./probe-run.js";
import { hasProjectManifest } from "./project-files.js";

export interface GatherOptions {
  /** Interpreter to probe: a path locally, or the command inside the container / image / ssh host. */
  python?: string;
  container?: string;
  image?: string;
  ssh?: string;
  /** undefined: the current directory when it holds a manifest; null: no project. */
  projectDir?: string | null;
  fast?: boolean;
  /** Extra modules to import-check beside the known extensions (a user's own compiled builds). */
  importChecks?: string[];
  /**
   * Scan the wheels the project's locks pin for this machine (gather/lock-scan.ts): with fetch,
   * downloading what is not on disk; without, only wheels already on disk. Absent: no lock scan.
   */
  lockScan?: { fetch: boolean; onProgress?: (done: number, total: number, name: string) => void };
  /** Limit for the probe run as a whole (default 120 s; a fresh image pull is not included). */
  timeoutMs?: number;
}

const DEFAULT_TIMEOUT_MS = 120_000;

export function defaultLocalPython(env: NodeJS.ProcessEnv = process.env): string {
  const venv = env["VIRTUAL_ENV"];
  if (venv && existsSync(join(venv, "bin", "python"))) return join(venv, "bin", "python");
  return "python3";
}

export function chooseTransport(options: GatherOptions): Transport {
  const targets = [options.container, options.image, options.ssh].filter((t) => t !== undefined);
  if (targets.length > 1) {
    throw new UserError(
      "--container, --image and --ssh exclude each other",
      "pick one place to run the probe",
    );
  }
  if (options.container !== undefined)
    return containerTransport(options.container, options.python ?? "python3");
  if (options.image !== undefined) return imageTransport(options.image, options.python ?? "python3");
  if (options.ssh !== undefined) return sshTransport(options.ssh, options.python ?? "python3");
  return localTransport(options.python ?? defaultLocalPython());
}

export async function gatherFacts(options: GatherOptions): Promise<Facts> {
  const transport = chooseTransport(options);
  // Read the manifests first: a malformed file fails fast, before a slow probe run.
  const projectDir =
    options.projectDir === undefined
      ? hasProjectManifest(process.cwd())
        ? process.cwd()
        : null
      : options.projectDir;
  const project = projectDir === null ? null : (await import("./project.js")).readProject(projectDir);
  // The probe (torch's import) is the long pole: start it before loading anything it does not
  // need (the Facts schema, the fatbin reader), then scan binaries beside it.
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const probing = startProbe(transport, {
    fast: options.fast ?? false,
    importChecks: options.importChecks ?? [],
    timeoutMs,
  });
  probing.result.catch(() => {}); // awaited below, after the parser loads
  const binaries = import("./binaries.js").then((m) => m.gatherBinaries(transport, options.fast ?? false));
  binaries.catch(() => {}); // awaited below; a probe error must not leave it unhandled
  const { parseProbeResult } = await import("./probe.js");
  const probe = parseProbeResult(transport, await probing.result, timeoutMs, probing.nonce);
  // The wheels are chosen for the probed CPU, Python and glibc, so this waits for the probe.
  const lockScan =
    options.lockScan && project
      ? await (
          await import("./lock-scan.js")
        ).gatherLockScan({ host: probe.host, python: probe.python, project }, options.lockScan)
      : null;
  return {
    // No kbOverlay: the overlay holds torch builds, which nothing gathered depends on.
    ...makeEnvelope(FACTS_SCHEMA_ID, FACTS_SCHEMA_VERSION, null),
    capturedAt: new Date().toISOString(),
    target: { kind: transport.kind, ref: transport.ref, python: transport.python },
    host: probe.host,
    python: probe.python,
    project,
    binaries: await binaries,
    ...(lockScan ? { lockScan } : {}),
  };
}
