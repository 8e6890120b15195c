/**
 * Names and values from outside written into generated files (issue 12, item 1): a pyproject
 * name, a requirements-only project's directory name, a GPU name from a --from snapshot,
 * --index-url and --volume, each carrying a newline, $(...), backticks, quotes, \r, U+2028 or a
 * YAML `include:`. The generated scripts then RUN with stand-ins for docker, uv and nvidia-smi:
 * no planted `touch` may run, and each tool must get exactly the argv that was meant. compose.yaml
 * is parsed (no planted top-level key), and every file goes through the real linters.
 */
import { test } from "node:test";
import { spawnSync } from "node:child_process";
import assert from "node:assert/strict";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parse as parseYaml } from "yaml";
import { parse as parseToml } from "smol-toml";
import { listFiles, repoRoot, runInit, unwrapped } from "./helpers.js";
import { lintDir } from "./lint-dir.js";
import { makeStandIns, runScript, type Call, type StandIns } from "./standins.js";

/** What a planted command would create: relative, so it also fits in a directory name. */
const MARKER = "planted-marker";

/** Each carries `touch planted-marker` in another way of breaking out of its context. */
const HOSTILE = [
  `demo\ntouch ${MARKER}`,
  `demo$(touch ${MARKER})`,
  `demo\`touch ${MARKER}\``,
  `demo'; touch ${MARKER}; '`,
  `demo"; touch ${MARKER}; "`,
  `demo\r\ntouch ${MARKER}`,
  `demo\u2028touch ${MARKER}`,
  `demo\ninclude: ${MARKER}.yaml`,
];

// The expected one-line form, written out here rather than imported from the code under test.
// eslint-disable-next-line no-control-regex
const ONE_LINE = (text: string) => text.replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029]/g, " ");

function freshDir(name: string): string {
  const dir = join(mkdtempSync(join(tmpdir(), "gpuprep-hostile-")), name);
  mkdirSync(dir);
  return dir;
}

function assertNoMarker(project: string, standIns: StandIns, what: string) {
  for (const dir of [project, standIns.cwd])
    assert.ok(!existsSync(join(dir, MARKER)), `${what}: a planted command ran (${join(dir, MARKER)} exists)`);
}

/** No line of any generated file starts with the planted command or a planted YAML key. */
function assertNoPlantedLine(project: string) {
  for (const file of listFiles(project)) {
    if (file.startsWith(".gpuprep/") || file.startsWith(".venv/")) continue;
    for (const line of readFileSync(join(project, file), "utf8").split(/\r\n|\n|\r|\u2028|\u2029/))
      assert.doesNotMatch(line, /^\s*(RUN\s+)?touch planted|^include:/, `${file}: planted line "${line}"`);
  }
}

/** Every Dockerfile line is a comment, an instruction, or the continuation of one (no stray line). */
function assertDockerfileShape(dockerfile: string) {
  const instruction = /^(FROM|ARG|ENV|RUN|COPY|SHELL|USER|WORKDIR|CMD) /;
  let continued = false;
  for (const line of dockerfile.split("\n")) {
    if (!continued && line !== "" && !line.startsWith("#"))
      assert.match(line, instruction, `Dockerfile line is no instruction: "${line}"`);
    continued = line.endsWith("\\") || (continued && line.startsWith("#"));
  }
}

function composeDoc(project: string) {
  return parseYaml(readFileSync(join(project, "compose.yaml"), "utf8")) as {
    services: Record<string, { volumes: string[] }>;
  };
}

function callsOf(calls: Call[], tool: string, first: string): string[][] {
  return calls.filter((c) => c.tool === tool && c.argv[0] === first).map((c) => c.argv);
}

/** The argument after `flag` in argv, for each occurrence. */
function valuesOf(argv: string[], flag: string): string[] {
  return argv.flatMap((a, i) => (a === flag && i + 1 < argv.length ? [argv[i + 1]!] : []));
}

const HOSTILE_VOLUMES = [`/data$(touch ${MARKER}):/data`, `/srv/it's \`touch ${MARKER}\`:/srv/x y:ro`];
const HOSTILE_INDEX = `https://mirror.example/simple/$(touch ${MARKER})/'q'/\`touch ${MARKER}\`/`;

test("a pyproject name outside PEP 508 is refused with one line and a hint, before anything is written", () => {
  for (const name of HOSTILE) {
    const project = freshDir("demo");
    writeFileSync(
      join(project, "pyproject.toml"),
      `[project]\nname = ${JSON.stringify(name)}\nversion = "1"\ndependencies = ["numpy"]\n`,
    );
    const result = runInit(["--project", project, "--target", "h100", "--driver", "580.95.05"]);
    assert.equal(result.code, 2, `${JSON.stringify(name)}: ${result.stderr}`);
    const lines = result.stderr.trimEnd().split("\n");
    assert.equal(lines.length, 2, `one error line and a hint: ${result.stderr}`);
    assert.match(lines[0]!, /\[project\] name .* is not a valid package name \(PEP 508\)/);
    assert.doesNotMatch(lines[0]!, /\bat \w+ \(/, "no stack trace");
    assert.deepEqual(listFiles(project), ["pyproject.toml"], "nothing written");
  }
});

test("a requirements-only project in a hostile directory: container files quote everything, run-container.sh runs nothing planted", (t) => {
  for (const name of HOSTILE) {
    const project = freshDir(name);
    writeFileSync(join(project, "requirements.txt"), "numpy\n");
    const args = [
      "--project",
      project,
      "--target",
      "h100",
      "--driver",
      "580.95.05",
      "--strategy",
      "container",
      "--jupyter",
    ];
    for (const volume of HOSTILE_VOLUMES) args.push("--volume", volume);
    args.push("--index-url", HOSTILE_INDEX);
    const result = runInit(args);
    assert.equal(result.code, 0, result.stderr);
    assert.match(unwrapped(result.stdout), /is not a package name: the generated files call it demo-/);
    assertNoPlantedLine(project);
    assertDockerfileShape(readFileSync(join(project, "Dockerfile"), "utf8"));
    const compose = composeDoc(project);
    assert.deepEqual(Object.keys(compose), ["services"], "compose.yaml: only services at the top");
    assert.deepEqual(Object.keys(compose.services), ["app", "jupyter"]);
    // Compose interpolates $: the user's $ is doubled, so Compose passes it on literally.
    assert.ok(compose.services["app"]!.volumes.includes(`/data$$(touch ${MARKER}):/data`));
    const devcontainer = JSON.parse(
      readFileSync(join(project, ".devcontainer", "devcontainer.json"), "utf8"),
    ) as { name: string };
    assert.match(devcontainer.name, /^demo-\S+ \(NVIDIA H100/);
    lintDir(project, t, ONE_LINE(name) === name);

    const standIns = makeStandIns(["docker", "nvidia-smi"]);
    const run = runScript(join(project, "scripts", "run-container.sh"), standIns, ["python3", "train.py"]);
    assert.equal(run.code, 0, run.stderr);
    assertNoMarker(project, standIns, JSON.stringify(name));
    const [build] = callsOf(standIns.calls(), "docker", "build");
    const [started] = callsOf(standIns.calls(), "docker", "run");
    assert.ok(build && started, `docker build and run: ${JSON.stringify(standIns.calls())}`);
    assert.equal(
      valuesOf(build, "--tag")[0],
      `${ONE_LINE(name)
        .toLowerCase()
        .replace(/[^a-z0-9._-]+/g, "-")
        .replace(/^[^a-z0-9]+|[^a-z0-9]+$/g, "")}-gpu:latest`,
    );
    const mounts = valuesOf(started, "-v");
    assert.ok(
      mounts.includes(`/data$(touch ${MARKER}):/data`),
      `the volume as given: ${JSON.stringify(mounts)}`,
    );
    assert.ok(mounts.includes(`/srv/it's \`touch ${MARKER}\`:/srv/x y:ro`), JSON.stringify(mounts));
    assert.ok(
      mounts.includes(`${project}:/workspace`),
      `the project, whatever its name: ${JSON.stringify(mounts)}`,
    );
    assert.deepEqual(started.slice(-2), ["python3", "train.py"]);
    // The Dockerfile's pip gets the URL as one word: its RUN line's tail, as the shell splits it.
    const dockerfile = readFileSync(join(project, "Dockerfile"), "utf8");
    const tail = /--index-url (.*?)(?: -r | \\$)/m.exec(dockerfile)?.[1] ?? "";
    const word = spawnSync("bash", ["-c", `set -- ${tail}; printf '%s|%s' "$#" "$1"`], {
      cwd: standIns.cwd,
      encoding: "utf8",
    });
    assert.equal(word.stdout, `1|${new URL(HOSTILE_INDEX).href}`, `RUN's --index-url word: ${tail}`);
    assertNoMarker(project, standIns, "the Dockerfile's --index-url word");
  }
});

test("a requirements-only project in a hostile directory: setup-native.sh passes --index-url and -r as single words", (t) => {
  for (const name of HOSTILE) {
    const project = freshDir(name);
    writeFileSync(join(project, "requirements.txt"), "numpy\n");
    const result = runInit([
      "--project",
      project,
      "--target",
      "h100",
      "--driver",
      "580.95.05",
      "--strategy",
      "native",
      "--index-url",
      HOSTILE_INDEX,
    ]);
    assert.equal(result.code, 0, result.stderr);
    assertNoPlantedLine(project);
    lintDir(project, t);
    const standIns = makeStandIns(["uv", "nvidia-smi"]);
    const run = runScript(join(project, "scripts", "setup-native.sh"), standIns);
    assert.equal(run.code, 0, run.stderr);
    assertNoMarker(project, standIns, JSON.stringify(name));
    const installs = callsOf(standIns.calls(), "uv", "pip");
    const torch = installs.find((argv) => argv.some((a) => a.startsWith("torch==")));
    assert.ok(torch, JSON.stringify(standIns.calls()));
    assert.deepEqual(valuesOf(torch, "--index-url"), [new URL(HOSTILE_INDEX).href]);
    assert.deepEqual(
      installs.flatMap((argv) => valuesOf(argv, "-r")),
      ["requirements.txt"],
    );
  }
});

interface Snapshot {
  host: {
    nvidia: { driverVersion: string | null; gpus: Array<{ name: string; computeCapability: string }> };
  };
}

function hostileSnapshot(gpuName: string, patch: (facts: Snapshot) => void = () => {}): string {
  // A real capture (test/fixtures/facts/h100-healthy.json, see its README) with the GPU's name replaced.
  const facts = JSON.parse(
    readFileSync(join(repoRoot, "test", "fixtures", "facts", "h100-healthy.json"), "utf8"),
  ) as Snapshot;
  facts.host.nvidia.gpus[0]!.name = gpuName;
  patch(facts);
  const path = join(mkdtempSync(join(tmpdir(), "gpuprep-snapshot-")), "facts.json");
  writeFileSync(path, JSON.stringify(facts));
  return path;
}

test("a hostile GPU name from a --from snapshot: control characters refused in one line, the rest quoted everywhere", (t) => {
  for (const gpuName of HOSTILE) {
    const snapshot = hostileSnapshot(gpuName);
    for (const strategy of ["native", "container"]) {
      const project = freshDir("demo");
      writeFileSync(
        join(project, "pyproject.toml"),
        `[project]\nname = "demo"\nversion = "1"\ndependencies = ["numpy"]\n`,
      );
      const extra = strategy === "container" ? ["--jupyter"] : [];
      const result = runInit(["--project", project, "--from", snapshot, "--strategy", strategy, ...extra]);
      if (ONE_LINE(gpuName) !== gpuName) {
        // A name no nvidia-smi prints: the snapshot is refused before anything is planned or written.
        assert.equal(result.code, 2, result.stderr);
        assert.match(result.stderr, /the GPU name ".*" holds control characters/);
        assert.equal(result.stderr.trimEnd().split("\n").length, 2, result.stderr);
        assert.deepEqual(listFiles(project), ["pyproject.toml"]);
        assertNoPlantedLine(project);
        continue;
      }
      assert.equal(result.code, 0, result.stderr);
      assertNoPlantedLine(project);
      lintDir(project, t);
      const headerFile = strategy === "native" ? "scripts/setup-native.sh" : "Dockerfile";
      assert.ok(
        readFileSync(join(project, headerFile), "utf8").includes(
          `for demo on ${ONE_LINE(gpuName)} (compute capability 9.0`,
        ),
        `${headerFile} header names the GPU on one line`,
      );
      if (strategy === "container") {
        assertDockerfileShape(readFileSync(join(project, "Dockerfile"), "utf8"));
        assert.deepEqual(Object.keys(composeDoc(project)), ["services"]);
        continue;
      }
      const toml = parseToml(readFileSync(join(project, "pyproject.toml"), "utf8")) as Record<
        string,
        unknown
      >;
      assert.deepEqual(Object.keys(toml).sort(), ["project", "tool"], "pyproject.toml: no planted table");
      // Without nvidia-smi the script names the GPU in its error: literally, nothing run.
      const standIns = makeStandIns(["uv"]);
      const run = runScript(join(project, "scripts", "setup-native.sh"), standIns);
      assert.equal(run.code, 1, run.stderr);
      assertNoMarker(project, standIns, JSON.stringify(gpuName));
      assert.ok(run.stderr.includes(`this setup is for ${ONE_LINE(gpuName)}\n`), run.stderr);
      assert.deepEqual(standIns.calls(), [], "nothing ran before the driver check");
    }
  }
});

test("a snapshot whose compute capability or driver is not a version is refused in one line", () => {
  const project = freshDir("demo");
  writeFileSync(join(project, "requirements.txt"), "numpy\n");
  const cases: Array<[(f: Snapshot) => void, RegExp]> = [
    [
      (f) => (f.host.nvidia.gpus[0]!.computeCapability = `9.0$(touch ${MARKER})`),
      /compute capability "9\.0\$\(touch planted-marker\)" is not MAJOR\.MINOR/,
    ],
    [
      (f) => (f.host.nvidia.driverVersion = `580.95 touch ${MARKER}`),
      /driver version "580\.95 touch planted-marker" is not a version/,
    ],
    [
      (f) => (f.host.nvidia.driverVersion = `580.95\ntouch ${MARKER}`),
      /driver version "580\.95\?touch planted-marker" holds control characters/,
    ],
  ];
  for (const [patch, message] of cases) {
    const result = runInit([
      "--project",
      project,
      "--from",
      hostileSnapshot("NVIDIA H100 80GB HBM3", patch),
      "--strategy",
      "container",
    ]);
    assert.equal(result.code, 2, result.stderr);
    assert.equal(result.stderr.trimEnd().split("\n").length, 2, result.stderr);
    assert.match(result.stderr, message);
  }
});

test("--index-url and --volume are parsed: credentials, other schemes, control characters and bad volumes are refused", () => {
  const project = freshDir("demo");
  writeFileSync(join(project, "requirements.txt"), "numpy\n");
  const base = ["--project", project, "--target", "h100", "--driver", "580.95.05", "--strategy", "container"];
  const cases: Array<[string[], RegExp]> = [
    [["--index-url", "https://alice:s3cret@mirror.example/simple"], /--index-url carries credentials/],
    [["--index-url", "ftp://mirror.example/simple"], /is not an http\(s\) URL/],
    [["--index-url", "https://mirror.example/simple\ntouch x"], /holds a control character/],
    [["--index-url", "mirror.example/simple"], /is not a URL/],
    [["--volume", "/data:relative"], /needs an absolute container path/],
    [["--volume", "/data:/data:rx"], /has mode "rx", not ro or rw/],
    [["--volume", "/data:/data\ntouch x"], /holds a control character/],
    [["--volume", "/data:/data\u2028include: x"], /holds a control character/],
    [["--volume", "/data:/"], /would mount over the container's root/],
    [
      ["--build-from-source", "xformers; touch x"],
      /--build-from-source "xformers; touch x" is not a package name/,
    ],
  ];
  for (const [flags, message] of cases) {
    const result = runInit([...base, ...flags]);
    assert.equal(result.code, 2, `${flags.join(" ")}: ${result.stderr}`);
    assert.equal(result.stderr.trimEnd().split("\n").length, 2, result.stderr);
    assert.match(result.stderr, message);
    assert.doesNotMatch(result.stderr, /s3cret/, "credentials never echoed");
    assert.ok(!existsSync(join(project, "Dockerfile")), "nothing written");
  }
});

test("setup-native.sh installs nested requirements by their path from the project root", () => {
  const project = freshDir("nested");
  mkdirSync(join(project, "requirements"));
  mkdirSync(join(project, "sub"));
  writeFileSync(join(project, "requirements.txt"), "-r sub/extra.txt\nnumpy\n");
  writeFileSync(join(project, "sub", "extra.txt"), "rich\n");
  writeFileSync(join(project, "requirements", "dev.txt"), "pytest\n");
  const result = runInit([
    "--project",
    project,
    "--target",
    "h100",
    "--driver",
    "580.95.05",
    "--strategy",
    "native",
  ]);
  assert.equal(result.code, 0, result.stderr);
  const standIns = makeStandIns(["uv", "nvidia-smi"]);
  const run = runScript(join(project, "scripts", "setup-native.sh"), standIns);
  assert.equal(run.code, 0, run.stderr);
  const files = callsOf(standIns.calls(), "uv", "pip").flatMap((argv) => valuesOf(argv, "-r"));
  assert.deepEqual(files.sort(), ["requirements.txt", "requirements/dev.txt", "sub/extra.txt"]);
  // uv runs where the script cds (the project root): each path must name the file from there.
  for (const file of files)
    assert.ok(existsSync(join(project, file)), `${file} exists from the project root`);
});

test("pyproject.toml edits quote keys and values as TOML: a dotted package name stays one key", () => {
  const project = freshDir("demo");
  const pyproject = `[project]\nname = "demo"\nversion = "1"\ndependencies = ["numpy", "foo.bar"]\n`;
  writeFileSync(join(project, "pyproject.toml"), pyproject);
  const result = runInit([
    "--project",
    project,
    "--target",
    "h100",
    "--driver",
    "580.95.05",
    "--strategy",
    "native",
    "--build-from-source",
    "foo.bar",
  ]);
  assert.equal(result.code, 0, result.stderr);
  const text = readFileSync(join(project, "pyproject.toml"), "utf8");
  assert.ok(text.startsWith(pyproject), "the user's lines stay as they were");
  const uv = (parseToml(text) as { tool: { uv: Record<string, Record<string, unknown>> } }).tool.uv;
  assert.deepEqual(Object.keys(uv["extra-build-dependencies"]!), ["foo.bar"]);
  // smol-toml's tables have a null prototype: compared as JSON.
  assert.equal(JSON.stringify(uv["extra-build-variables"]), '{"foo.bar":{"TORCH_CUDA_ARCH_LIST":"9.0"}}');
  assert.equal(JSON.stringify(uv["sources"]!["torch"]), '[{"index":"pytorch-cu130"}]');
});
