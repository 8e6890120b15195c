/**
 * gatherFacts: the one place gpuprep looks at the outside world. Runs the probe where the user
 * pointed (local interpreter, container, image, ssh host), reads the project's manifests, and
 * returns one Facts snapshot.
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import { FACTS_SCHEMA_ID, FACTS_SCHEMA_VERSION, type Facts } from "../facts/schema.js";
import { UserError } from "../errors.js";
import { TOOL_VERSION } from "../version.js";
import { localTransport } from "../transports/local.js";
import { containerTransport, imageTransport } from "../transports/docker.js";
import { sshTransport } from "../transports/ssh.js";
import type { Transport } from "../transports/types.js";
import { runProbe } from "./probe.js";
import { gatherBinaries } from "./binaries.js";
import { hasProjectManifest, readProject } from "./project.js";

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
  /** Limit for the probe run as a whole (default 120 s; a fresh image pull is not included). */
  timeoutMs?: number;
}

export const DEFAULT_TIMEOUT_MS = 120_000;

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
  const project = projectDir === null ? null : readProject(projectDir);
  // The probe (torch's import) is the long pole: start it first, scan binaries beside it.
  const probing = runProbe(transport, {
    fast: options.fast ?? false,
    importChecks: options.importChecks ?? [],
    timeoutMs: options.timeoutMs ?? DEFAULT_TIMEOUT_MS,
  });
  const binaries = gatherBinaries(transport, options.fast ?? false);
  const probe = await probing;
  return {
    schema: FACTS_SCHEMA_ID,
    schemaVersion: FACTS_SCHEMA_VERSION,
    tool: { name: "gpuprep", version: TOOL_VERSION },
    capturedAt: new Date().toISOString(),
    target: { kind: transport.kind, ref: transport.ref, python: transport.python },
    host: probe.host,
    python: probe.python,
    project,
    binaries: await binaries,
  };
}
