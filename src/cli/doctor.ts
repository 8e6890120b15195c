/**
 * `gpuprep doctor`: gather Facts (or read a saved snapshot), run every rule, print the report.
 * Exit 0: no errors (warnings/info only); 1: errors found; 2: the tool could not run.
 * Writes only what it is asked to: --save (facts snapshot) and --sarif (report).
 */
import { writeDocument, writeText } from "../report/terminal.js";
import { writeOutputFile } from "../util/write-output.js";
import { UserError } from "../errors.js";
import { EXIT_FINDINGS, EXIT_OK, defineCommand, type OptionTable, type ValuesOf } from "./command.js";
import { checkedModuleNames, onePlace } from "./args.js";
import { makeStyle, useColor } from "../report/style.js";
import type { Facts } from "../facts/schema.js";
import { gatherFacts } from "../gather/index.js";
import { startProgress, type Progress } from "../util/console-status.js";

/** What the progress line says doctor waits for: the probe, whose torch import takes seconds. */
function progressDetail(values: {
  python?: string;
  container?: string;
  image?: string;
  ssh?: string;
  fast?: boolean;
}): string {
  const python = values.python ?? "python";
  if (values.container !== undefined) return `probing ${python} in container ${values.container}`;
  if (values.image !== undefined) return `probing ${python} in image ${values.image}`;
  if (values.ssh !== undefined) return `probing ${python} on ${values.ssh}`;
  return `probing ${python}${values.fast ? "" : " (imports torch)"}`;
}

/**
 * The rules, the knowledge base and the renderers are loaded while the probe runs, not before it
 * starts: doctor's wall time is the probe's (torch's import) plus what cannot overlap with it.
 */
async function loadDiagnosis() {
  const [{ loadKnowledgeBase }, { diagnose }, { RULES }, text, json, sarif] = await Promise.all([
    import("../kb/index.js"),
    import("../diagnose/diagnose.js"),
    import("../rules/registry.js"),
    import("../report/text.js"),
    import("../report/json.js"),
    import("../report/sarif.js"),
  ]);
  return { kb: loadKnowledgeBase(), diagnose, RULES, ...text, ...json, ...sarif };
}

/**
 * doctor --target NAME: the project's manifests judged for a machine named from the knowledge base
 * (its GPU, CPU and driver); no environment is gathered, so only the project rules run.
 */
async function diagnoseForTarget(
  fromSettings: ReadonlyMap<string, string>,
  values: {
    target?: string;
    driver?: string;
    arch?: string;
    project?: string;
    json?: boolean;
    sarif?: string;
  },
): Promise<number> {
  const { kb, diagnose, RULES, renderText, renderJson, renderSarif } = await loadDiagnosis();
  // Loaded here, not at the top: doctor's gathering path starts the probe before anything heavy.
  const [
    { targetFromName },
    { hasProjectManifest, readProject },
    { factsForNamedMachine },
    { PROJECT_RULE_IDS },
  ] = await Promise.all([
    import("../plan/target.js"),
    import("../gather/project.js"),
    import("../gather/named-machine.js"),
    import("../rules/registry.js"),
  ]);
  const target = targetFromName(kb, {
    gpu: values.target!,
    driver: values.driver ?? null,
    cpuArch: values.arch ?? null,
    flag: fromSettings.get("target") ?? "--target",
  });
  const projectDir = values.project ?? (hasProjectManifest(process.cwd()) ? process.cwd() : null);
  if (projectDir === null)
    throw new UserError(
      "doctor --target judges a project's manifests for that machine, and there is none here",
      "run it in the project, or pass --project DIR",
    );
  const facts = factsForNamedMachine(
    {
      origin: target.origin,
      gpuName: target.gpuName,
      computeCapability: target.computeCapability,
      cpuArch: target.cpuArch,
      driverVersion: target.driverVersion,
      python: null,
    },
    readProject(projectDir),
  );
  const rules = RULES.filter((rule) => PROJECT_RULE_IDS.includes(rule.id));
  const findings = diagnose(facts, kb, rules);
  const exitCode = findings.some((f) => f.severity === "error") ? EXIT_FINDINGS : EXIT_OK;
  if (values.sarif !== undefined)
    writeOutputFile(values.sarif, renderSarif(findings, rules, facts), "--sarif");
  if (values.json) writeDocument(renderJson(facts, findings, exitCode));
  else writeText(renderText(facts, findings, makeStyle(useColor())));
  return exitCode;
}

/** A snapshot with the project's locked wheels scanned for its machine (replacing any it held). */
async function withLockScan(facts: Facts): Promise<Facts> {
  const { gatherLockScan } = await import("../gather/lock-scan.js");
  const progress = startProgress("doctor", "reading the locked wheels");
  try {
    const lockScan = await gatherLockScan(facts, {
      fetch: true,
      onProgress: (done, total, name) => progress.update(`locked wheels ${done}/${total} (${name})`),
    });
    const { lockScan: _old, ...rest } = facts;
    return lockScan ? { ...rest, lockScan } : rest;
  } finally {
    progress.end();
  }
}

const WHERE = "where the Python environment is (one of; default: the active venv, else python3)";

const OPTIONS = {
  python: {
    type: "string",
    value: "PATH",
    description: "this interpreter (with --container/--image/--ssh: the one in there)",
    group: WHERE,
  },
  container: {
    type: "string",
    value: "NAME",
    description: "a running container (docker exec)",
    group: WHERE,
  },
  image: { type: "string", value: "REF", description: "an image (docker run --rm --gpus all)", group: WHERE },
  ssh: { type: "string", value: "HOST", description: "a remote host", group: WHERE },
  from: {
    type: "string",
    value: "FILE",
    description:
      "a snapshot saved with --save (diagnosed here, nothing is run; --project judges another project on it)",
    group: WHERE,
  },
  target: {
    type: "string",
    value: "NAME",
    description:
      "a machine you are not on, from the knowledge base (dgx-spark, rtx-5090, h100 ...): only the project's manifests are judged",
    group: WHERE,
    setting: { key: "target", bare: true },
  },
  driver: {
    type: "string",
    value: "VER",
    description: "with --target: the machine's NVIDIA driver (580 or 580.95.05)",
    group: WHERE,
    setting: { key: "driver", onlyWith: ["target"] },
  },
  arch: {
    type: "string",
    value: "x86_64|aarch64",
    description: "with --target: the host CPU",
    group: WHERE,
    setting: { key: "arch", onlyWith: ["target"] },
  },
  project: {
    type: "string",
    value: "DIR",
    description: "the project to check pins of (default: the current directory, if it has one)",
  },
  fast: {
    type: "boolean",
    description: "no torch import and no extension imports: facts read from files only",
  },
  "import-check": {
    type: "string",
    multiple: true,
    value: "MOD",
    description:
      "also import MOD in a child process and report how it fails (your own\ncompiled extensions); repeatable",
  },
  fetch: {
    type: "boolean",
    description:
      "also download the CUDA libraries of the wheels the project's lock pins\n(uv.lock, pylock.toml, requirements with hashes) and check them for this\nGPU; without it only locked wheels already on disk are read",
  },
  save: {
    type: "string",
    value: "FILE",
    description: "also write the facts snapshot to FILE (for --from, bug reports)",
  },
  json: { type: "boolean", description: "print { findings, facts, summary } as JSON instead of text" },
  sarif: { type: "string", value: "FILE", description: "also write the findings as SARIF 2.1.0 to FILE" },
} as const satisfies OptionTable;

type DoctorValues = ValuesOf<typeof OPTIONS>;

/** The flag combinations doctor refuses, each in one line with what to do instead. */
function checkDoctorFlags(values: DoctorValues): void {
  // --python names the interpreter, also inside a container, image or ssh host.
  onePlace("doctor", values, ["container", "image", "ssh", "from", "target"], "name one place to check");
  if (
    (values.from !== undefined || values.target !== undefined) &&
    (values.python !== undefined || values.save !== undefined || values.fast)
  ) {
    throw new UserError(
      values.from !== undefined
        ? "doctor: --from diagnoses a saved snapshot; --python, --save and --fast apply only when gathering"
        : "doctor: --target judges a project for a named machine; --python, --save and --fast apply only when gathering",
      "drop them",
    );
  }
  if (values.target === undefined && (values.driver !== undefined || values.arch !== undefined))
    throw new UserError(
      "doctor: --driver and --arch describe a --target machine",
      "add --target NAME, or drop them",
    );
  if (values.target !== undefined && values.fetch)
    throw new UserError(
      "doctor: --fetch picks the locked wheels for a gathered machine's Python, and --target names none",
      "use gpuprep scan --lock uv.lock --target NAME --python-version 3.12",
    );
}

export const doctorCommand = defineCommand({
  name: "doctor",
  title: "will PyTorch work on this GPU, here, and if not, why and what to type",
  options: OPTIONS,
  projectFlag: "project",
  outputs: ["save", "sarif"],
  outro: "exit status: 0 no errors, 1 errors found, 2 gpuprep itself could not run",
  examples: [
    ["gpuprep doctor", "the active venv (else python3) on this machine"],
    ["gpuprep doctor --python .venv/bin/python --json", "one interpreter, the report as JSON"],
    ["gpuprep doctor --image nvcr.io/nvidia/pytorch:25.10-py3", "inside a fresh container of an image"],
    [
      "gpuprep doctor --ssh gpu-node-1 --save node1.json --sarif doctor.sarif",
      "a remote host; keep the facts and a SARIF report",
    ],
  ],
  async run({ values, fromSettings }) {
    checkDoctorFlags(values);
    if (values.target !== undefined) return diagnoseForTarget(fromSettings, values);

    let facts: Facts;
    let progress: Progress = { update: () => {}, end: () => {} };
    let diagnosis: ReturnType<typeof loadDiagnosis>;
    if (values.from !== undefined) {
      facts = (await import("../facts/io.js")).readFactsFile(values.from);
      // Another project judged for the snapshot's machine (issue 22 item 9).
      if (values.project !== undefined)
        facts = { ...facts, project: (await import("../gather/project.js")).readProject(values.project) };
      // --fetch: the project's locked wheels read now, for the snapshot's CPU, Python and glibc.
      if (values.fetch) facts = await withLockScan(facts);
      diagnosis = loadDiagnosis();
    } else {
      progress = startProgress("doctor", progressDetail(values));
      const gathering = gatherFacts({
        python: values.python,
        container: values.container,
        image: values.image,
        ssh: values.ssh,
        // Not given: gather checks the current directory when it holds a manifest.
        projectDir: values.project,
        fast: values.fast ?? false,
        importChecks: checkedModuleNames("doctor", values["import-check"] ?? []),
        lockScan: {
          fetch: values.fetch ?? false,
          onProgress: (done, total, name) => progress.update(`locked wheels ${done}/${total} (${name})`),
        },
      });
      diagnosis = loadDiagnosis();
      diagnosis.catch(() => {}); // awaited below; a gathering error must not leave it unhandled
      facts = await gathering;
      progress.update("diagnosing");
      if (values.save !== undefined) (await import("../facts/io.js")).writeFactsFile(values.save, facts);
    }

    const { kb, diagnose, RULES, renderText, renderJson, renderSarif } = await diagnosis;
    progress.end(); // gone before the report is printed
    const findings = diagnose(facts, kb);
    const exitCode = findings.some((f) => f.severity === "error") ? EXIT_FINDINGS : EXIT_OK;
    if (values.sarif !== undefined)
      writeOutputFile(values.sarif, renderSarif(findings, RULES, facts), "--sarif");
    if (values.json) writeDocument(renderJson(facts, findings, exitCode));
    else writeText(renderText(facts, findings, makeStyle(useColor())));
    return exitCode;
  },
});
