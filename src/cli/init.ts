/**
 * `gpuprep init`: plan a setup for the project on a machine and write its files. Every decision is
 * printed with its reason and source; --dry-run prints the files' diffs and writes nothing; files
 * the user edited are never overwritten without --force (and then kept as a backup).
 */
import { writeDocument, writeText } from "../report/terminal.js";
import { renderInitText } from "../report/init-text.js";
import { renderJsonDocument } from "../report/envelope.js";
import { INIT_SCHEMA, INIT_SCHEMA_VERSION } from "../report/document-ids.js";
import { existsSync, statSync } from "node:fs";
import { READ_LIMITS, readTextFile } from "../util/safe-read.js";
import { isAbsolute, join, relative, resolve } from "node:path";
import { UserError } from "../errors.js";
import { hasControlCharacters, quotedForMessage } from "../util/single-line.js";
import { parseVolumeFlag } from "../plan/volume.js";
import { isPep508Name } from "../plan/project-name.js";
import { EXIT_OK, defineCommand, type OptionTable, type ValuesOf } from "./command.js";
import { makeStyle, useColor } from "../report/style.js";
import { verboseEnabled } from "../util/console-status.js";
import { readFactsFile, writeFactsFile } from "../facts/io.js";
import { gatherFacts } from "../gather/index.js";
import { hasProjectManifest, readProject } from "../gather/project.js";
import { loadKnowledgeBase } from "../kb/index.js";
import { makePlan, type InitOptions } from "../plan/index.js";
import { planDocument, type ContainerPlan, type Plan } from "../plan/types.js";
import {
  parseRegistryMirror,
  pinnedByRegistry,
  throughMirror,
  type RegistryAnswer,
} from "../plan/base-image.js";
import type { ProjectFacts } from "../facts/schema.js";
import { startProgress } from "../util/console-status.js";
import { targetFromFacts, targetFromName } from "../plan/target.js";
import { generateFiles } from "../generate/index.js";
import { applyWrites, finishInterruptedInit, planWrites } from "../generate/write.js";

const PROJECT = "the project";
/** How long init --fetch waits for the registry's answer about the base image's tag. */
const REGISTRY_DEADLINE_MS = 30_000;
const MACHINE = "the machine (default: this one, as doctor sees it)";
const SETUP = "the setup";
const WRITING = "writing";

const OPTIONS = {
  project: {
    type: "string",
    value: "DIR",
    description:
      "the project (default: the current directory); reads pyproject.toml,\nrequirements*.txt, uv.lock, pixi.toml, environment.yml",
    group: PROJECT,
  },
  target: {
    type: "string",
    value: "NAME",
    description:
      "a GPU or system by name: dgx-spark, jetson-thor, rtx-5090, rtx-5070-ti,\nrtx-pro-6000, rtx-4090, b200, b300, gb200, h100, h200, gh200, a100, l40s,\nl4, t4, v100, ... (`gpuprep kb gpu NAME` shows one)",
    group: MACHINE,
    setting: { key: "target", unless: ["gpu", "from", "save"] },
  },
  gpu: {
    type: "string",
    value: "NAME",
    description: "the same, also a compute capability (12.0)",
    group: MACHINE,
  },
  driver: {
    type: "string",
    value: "VER",
    description:
      "the machine's NVIDIA driver (580.95.05 or a branch, 580); without it a\nnamed system (dgx-spark) is planned for the driver it ships with, where\nthat is sourced, and any other target says which driver it needs",
    group: MACHINE,
    setting: { key: "driver", onlyWith: ["target", "gpu"] },
  },
  arch: {
    type: "string",
    value: "x86_64|aarch64",
    description: "the host CPU (integrated systems such as DGX Spark set it themselves)",
    group: MACHINE,
    setting: { key: "arch", onlyWith: ["target", "gpu"] },
  },
  from: {
    type: "string",
    value: "FILE",
    description:
      "the machine from a facts snapshot written by --save (doctor's,\nmemory's or this one's); nothing is gathered. The project is still\n--project's, where the files are written",
    group: MACHINE,
  },
  save: {
    type: "string",
    value: "FILE",
    description: "also write the facts gathered (this machine and the project) to FILE",
    group: MACHINE,
  },
  strategy: {
    type: "string",
    value: "S",
    description:
      "container (NGC PyTorch image whose torch the project's pin accepts),\nnative (uv venv) or auto (default: the one that keeps every pin)",
    choices: ["auto", "container", "native"],
    group: SETUP,
    setting: { key: "strategy" },
  },
  jupyter: {
    type: "boolean",
    description:
      "add a Jupyter service on 127.0.0.1:8888 that needs a token and runs\nas the host user (container setups only)",
    group: SETUP,
    setting: { key: "jupyter" },
  },
  "non-root": {
    type: "boolean",
    description: "run as a user with the host user's ids (the default; --root turns it off)",
    group: SETUP,
  },
  root: {
    type: "boolean",
    description: "run the app container as root instead of the host user",
    group: SETUP,
    setting: { key: "non-root" },
  },
  volume: {
    type: "string",
    multiple: true,
    value: "HOST:CTR[:ro|rw]",
    description: "one more volume, CTR absolute (repeatable)",
    group: SETUP,
    setting: { key: "volumes" },
  },
  "build-from-source": {
    type: "string",
    multiple: true,
    value: "PKG",
    description: "compile this extension for exactly the target GPU (repeatable, or a,b)",
    group: SETUP,
    setting: { key: "build-from-source" },
  },
  wheelhouse: {
    type: "string",
    value: "DIR",
    description: "offline build: install only from this directory of wheels (in the project)",
    group: SETUP,
    setting: { key: "wheelhouse" },
  },
  "index-url": {
    type: "string",
    value: "URL",
    description:
      "install from this http(s) index instead of PyPI (a mirror; no\nuser:password in it: uv and pip read ~/.netrc)",
    group: SETUP,
    setting: { key: "index-url" },
  },
  "shm-size": {
    type: "string",
    value: "SIZE",
    description:
      "the container's /dev/shm size (default 16g), or `host` to share the\nhost's IPC namespace instead",
    group: SETUP,
    setting: { key: "shm-size" },
  },
  python: {
    type: "string",
    value: "VER",
    description:
      "Python for the native venv (default: the newest that the torch build,\nrequires-python and the project's pinned compiled packages all allow)",
    group: SETUP,
    setting: { key: "python" },
  },
  "registry-mirror": {
    type: "string",
    value: "HOST[/PATH]",
    description:
      "pull the NGC base image from this mirror of nvcr.io (a pull-through\ncache or a copy with the same paths and tags), e.g. harbor.corp/nvcr-proxy",
    group: SETUP,
    setting: { key: "registry-mirror" },
  },
  fetch: {
    type: "boolean",
    description:
      "also read the wheels the project's lock pins (downloading their CUDA\nlibraries) and say in the plan and SETUP.md which cannot run on the\ntarget, and pin the base image by the digest its registry names for\nthe tag; the image is not downloaded",
    group: SETUP,
  },
  "dry-run": {
    type: "boolean",
    description: "print the plan and every file's diff; write nothing",
    group: WRITING,
  },
  force: {
    type: "boolean",
    description: "also replace files you edited (backups under .gpuprep/backups/)",
    group: WRITING,
  },
  json: { type: "boolean", description: "print the plan and the file list as JSON", group: WRITING },
} as const satisfies OptionTable;

type Values = ValuesOf<typeof OPTIONS>;

function fail(message: string, hint: string): never {
  throw new UserError(`init: ${message}`, hint);
}

/**
 * --index-url through the WHATWG parser: http(s) only, and no user:password, which would be
 * written into the Dockerfile, the scripts and pyproject.toml (and echoed here). Returns the
 * parser's normal form, the one every generated file then quotes for its own syntax.
 */
function checkedIndexUrl(text: string): string {
  const hint = "e.g. --index-url https://mirror.example/simple";
  // Never echo credentials, not even in the error for a URL that does not parse.
  const shown = quotedForMessage(text.replace(/\/\/[^/@]*@/, "//***@"));
  if (hasControlCharacters(text)) fail(`--index-url ${shown} holds a control character`, hint);
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return fail(`--index-url ${shown} is not a URL`, hint);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:")
    fail(`--index-url ${shown} is not an http(s) URL`, hint);
  if (url.username || url.password)
    fail(
      "--index-url carries credentials (user:password@), which would be written into the generated files",
      "give the URL without them; uv and pip read credentials from ~/.netrc or a keyring",
    );
  return url.href;
}

function checkedOptions(values: Values, projectDir: string): InitOptions {
  const strategy = values.strategy ?? "auto";
  if (strategy !== "auto" && strategy !== "container" && strategy !== "native")
    fail(`--strategy "${strategy}" is not one of container, native, auto`, "pick one of the three");
  const volumes = (values.volume ?? []).map((spec) => {
    parseVolumeFlag(spec); // refuses what compose.yaml and the run script could not quote safely
    return spec;
  });
  let wheelhouse: string | null = null;
  if (values.wheelhouse !== undefined) {
    const full = resolve(projectDir, values.wheelhouse);
    if (!existsSync(full) || !statSync(full).isDirectory())
      fail(
        `--wheelhouse ${values.wheelhouse} is not a directory`,
        "give a directory of .whl files inside the project",
      );
    wheelhouse = relative(projectDir, full);
    if (wheelhouse.startsWith("..") || isAbsolute(wheelhouse))
      fail(
        `--wheelhouse ${values.wheelhouse} is outside the project`,
        "Docker can only mount directories of the build context: move it into the project",
      );
    // It is written into a RUN --mount option (where a comma starts another option), the scripts
    // and pyproject.toml: plain path characters only.
    if (!/^[A-Za-z0-9._/-]+$/.test(wheelhouse))
      fail(
        `--wheelhouse ${quotedForMessage(wheelhouse)} has characters other than letters, digits, '.', '_', '-' and '/'`,
        "rename the directory (e.g. wheelhouse/)",
      );
  }
  const indexUrl = values["index-url"] === undefined ? null : checkedIndexUrl(values["index-url"]);
  const buildFromSource = (values["build-from-source"] ?? [])
    .flatMap((v) => v.split(","))
    .map((v) => v.trim())
    .filter(Boolean);
  for (const name of buildFromSource)
    if (!isPep508Name(name))
      fail(
        `--build-from-source ${quotedForMessage(name)} is not a package name`,
        "give the name as on PyPI, e.g. --build-from-source flash-attn",
      );
  if (values["index-url"] !== undefined && wheelhouse)
    fail("--wheelhouse and --index-url cannot be combined", "an offline build uses only the wheelhouse");
  if (values["shm-size"] !== undefined && !/^(\d+[bkmg]?|host)$/i.test(values["shm-size"]))
    fail(`--shm-size "${values["shm-size"]}" is not a size`, "e.g. --shm-size 16g, or --shm-size host");
  if (values.root && values["non-root"]) fail("--root and --non-root contradict each other", "drop one");
  if (values.python !== undefined && !/^3\.\d+(\.\d+)?$/.test(values.python))
    fail(`--python "${values.python}" is not a Python version`, "e.g. --python 3.12");
  return {
    strategy,
    jupyter: values.jupyter ?? false,
    // The app runs as the host user unless --root (issue 28): files it writes stay the user's.
    nonRoot: !(values.root ?? false),
    volumes,
    buildFromSource,
    wheelhouse,
    indexUrl,
    shmSize: values["shm-size"]?.toLowerCase() ?? null,
    python: values.python ?? null,
  };
}

/**
 * The machine and the project the plan is made from, both gathered (or the machine read from a
 * snapshot, or named): the plan is a function of these, the knowledge base and the options. The
 * project is always the one in `projectDir`, where the files are written, also with --from: a
 * snapshot's project is that of the machine it was saved on.
 */
async function planInputs(
  values: Values,
  kb: ReturnType<typeof loadKnowledgeBase>,
  projectDir: string,
  fromSettings: ReadonlyMap<string, string>,
) {
  const named = values.target ?? values.gpu;
  if (values.target !== undefined && values.gpu !== undefined)
    fail("--target and --gpu name the same thing", "give one of them");
  if (named !== undefined && values.from !== undefined)
    fail("--from and --target/--gpu cannot be combined", "name one machine");
  if (values.save !== undefined && (named !== undefined || values.from !== undefined))
    fail(
      "--save writes the facts gathered here; with --from, --target or --gpu nothing is gathered",
      "drop --save, or drop the named machine",
    );
  if (named !== undefined) {
    const target = targetFromName(kb, {
      gpu: named,
      driver: values.driver ?? null,
      cpuArch: values.arch ?? null,
      flag: values.target !== undefined ? (fromSettings.get("target") ?? "--target") : "--gpu",
    });
    return { target, project: readProject(projectDir) };
  }
  if (values.driver !== undefined || values.arch !== undefined)
    fail(
      "--driver and --arch describe a named machine",
      "add --target NAME (or --gpu NAME), or drop them to plan for this machine",
    );
  if (values.from !== undefined) {
    const target = targetFromFacts(kb, readFactsFile(values.from), values.from);
    return { target, project: readProject(projectDir) };
  }
  // One gathering, this machine and the project together, as doctor gathers them.
  const facts = await gatherFacts({ fast: true, importChecks: [], projectDir });
  if (values.save !== undefined) writeFactsFile(values.save, facts);
  return {
    target: targetFromFacts(kb, facts, "this machine"),
    project: facts.project ?? readProject(projectDir),
  };
}

/**
 * init --fetch: the project's locked wheels read for the planned machine (the target's CPU, the
 * plan's Python) and judged for its GPU, as one decision of the plan.
 */
async function lockedWheelsCheck(plan: Plan, project: ProjectFacts) {
  const [{ scanProjectLocks, ASSUMED_GLIBC }, { lockedWheelsDecision }] = await Promise.all([
    import("../gather/lock-scan.js"),
    import("../plan/locked-wheels.js"),
  ]);
  const python = plan.strategy === "native" ? plan.native.python : plan.container.image.python;
  const minor = python ? /^(\d+\.\d+)/.exec(python)?.[1] : undefined;
  if (!minor)
    return lockedWheelsDecision(plan, null, "the image's Python is not known, so no wheel can be picked");
  const [major, glibcMinor] = ASSUMED_GLIBC.split(".").map(Number) as [number, number];
  const progress = startProgress("init", "reading the locked wheels");
  try {
    const scan = await scanProjectLocks(
      project,
      { arch: plan.target.cpuArch, python: minor, glibc: [major, glibcMinor], glibcAssumed: true },
      {
        fetch: true,
        onProgress: (done, total, name) => progress.update(`locked wheels ${done}/${total} (${name})`),
      },
    );
    return lockedWheelsDecision(plan, scan, null);
  } finally {
    progress.end();
  }
}

/** The plan pulling its base image through --registry-mirror; a native plan pulls no image. */
function withRegistryMirror(plan: Plan, text: string | undefined): Plan {
  if (text === undefined) return plan;
  const mirror = parseRegistryMirror(text);
  if (mirror === null)
    fail(
      `--registry-mirror ${quotedForMessage(text)} is not a registry host[:port][/path]`,
      "e.g. --registry-mirror harbor.corp/nvcr-proxy (no scheme, no tag)",
    );
  if (plan.strategy === "container") return throughMirror(plan, mirror);
  return {
    ...plan,
    warnings: [
      ...plan.warnings,
      `--registry-mirror ${mirror} is not used: the plan is native and pulls no image`,
    ],
  };
}

/** init --fetch: the digest the registry names for the plan's image tag now. */
async function askRegistryForDigest(plan: ContainerPlan): Promise<RegistryAnswer> {
  const [{ readTagDigest }, { DEFAULT_HTTP_LIMITS, HttpClient }] = await Promise.all([
    import("../remote/registry.js"),
    import("../remote/http.js"),
  ]);
  const progress = startProgress("init", `asking the registry for ${plan.container.ref}'s digest`);
  try {
    const client = new HttpClient({ ...DEFAULT_HTTP_LIMITS, deadlineMs: REGISTRY_DEADLINE_MS });
    const digest = await readTagDigest(plan.container.ref, client);
    return { digest, askedOn: new Date().toISOString().slice(0, 10) };
  } catch (error) {
    // Not reaching the registry leaves the tag as the pin, said in the plan; init goes on.
    if (error instanceof UserError) return { error: error.message };
    throw error;
  } finally {
    progress.end();
  }
}

/** A manifest's text as it is now, for the native plan's edit of it; null where the project has none. */
function currentManifest(projectDir: string, name: string): string | null {
  const path = join(projectDir, name);
  return existsSync(path)
    ? readTextFile(path, { maxBytes: READ_LIMITS.manifest, hint: `check ${name}` })
    : null;
}

/** environment.yml (or environment.yaml, as gather reads them) with its file name. */
function currentCondaEnvironment(projectDir: string): { file: string; text: string } | null {
  for (const file of ["environment.yml", "environment.yaml"]) {
    const text = currentManifest(projectDir, file);
    if (text !== null) return { file, text };
  }
  return null;
}

export const initCommand = defineCommand({
  name: "init",
  title: "plan and write a working setup for this project on a GPU machine",
  options: OPTIONS,
  projectFlag: "project",
  unexpectedArgumentHint: "give the project with --project DIR",
  outro: "exit status: 0 written (or dry run), 2 gpuprep could not plan or write",
  examples: [
    ["gpuprep init --dry-run", "the plan for this project on this machine; nothing written"],
    ["gpuprep init --target dgx-spark --strategy container", "an NGC container setup for a DGX Spark"],
    [
      "gpuprep init --from node1.json --strategy native --python 3.12",
      "a uv venv for the machine in a snapshot",
    ],
  ],
  async run({ values, fromSettings }) {
    const projectDir = resolve(values.project ?? ".");
    if (!existsSync(projectDir))
      fail(`project directory ${values.project} does not exist`, "pass an existing directory with --project");
    if (!hasProjectManifest(projectDir))
      fail(
        `${projectDir} has no pyproject.toml, requirements*.txt, pixi.toml or environment.yml`,
        "run init in the project's directory, or pass --project DIR",
      );
    // An init that was killed or ran out of disk: its committed journal is finished, or its
    // temporary files removed, before anything is read (generate/write.ts). --dry-run writes nothing.
    if (!(values["dry-run"] ?? false)) finishInterruptedInit(projectDir);
    const options = checkedOptions(values, projectDir);
    const kb = loadKnowledgeBase();
    const { target, project } = await planInputs(values, kb, projectDir, fromSettings);
    let plan = withRegistryMirror(makePlan(kb, project, target, options), values["registry-mirror"]);
    if (values.fetch) {
      plan.decisions.push(await lockedWheelsCheck(plan, project));
      if (plan.strategy === "container") plan = pinnedByRegistry(plan, await askRegistryForDigest(plan));
    }
    // Read here, not gathered: the native plan's one edit of a user file appends to its text as it
    // is now (like planWrites, which reads each file to keep the user's edits). The plan itself
    // took pyproject.toml's facts from the project gathered above.
    const { files, notes } = generateFiles(plan, {
      pyproject: currentManifest(projectDir, "pyproject.toml"),
      pixi: currentManifest(projectDir, "pixi.toml"),
      conda: currentCondaEnvironment(projectDir),
    });
    const writes = planWrites(projectDir, files);
    const dryRun = values["dry-run"] ?? false;
    let backup: string | null = null;
    if (!dryRun) backup = applyWrites(projectDir, writes, values.force ?? false);
    if (values.json) {
      writeDocument(
        renderJsonDocument(INIT_SCHEMA, INIT_SCHEMA_VERSION, {
          plan: planDocument(plan),
          files: writes.map((w) => ({ path: w.file.path, status: w.status, content: w.file.content })),
          notes,
          dryRun,
          backup,
        }),
      );
      return EXIT_OK;
    }
    writeText(
      renderInitText({ plan, writes, notes, dryRun, backup }, makeStyle(useColor()), {
        verbose: verboseEnabled(),
      }),
    );
    return EXIT_OK;
  },
});
