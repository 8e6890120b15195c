/**
 * The generated container setup's safety properties (issue 12, item 6), asserted directly rather
 * than through golden files: secrets stay out of the build context (checked with Docker's own
 * .dockerignore matcher, by building a context-dump image), every RUN pipeline fails on its first
 * failing command, Jupyter binds the host's loopback only, demands a token and never runs as root,
 * credentials are mounted read-only everywhere (also where the project mount shows them), and a
 * native plan refuses --jupyter.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parse as parseYaml } from "yaml";
import { copyExample, listFiles, runInit } from "./helpers.js";
import { makeStandIns, runScript } from "./standins.js";
import { DOCKER_ENGINE, needs } from "../support/needs.js";

interface Service {
  volumes: string[];
  ports?: string[];
  command?: string[];
  user?: string;
  build?: { args?: Record<string, string> };
}

function containerProject(extra: string[] = []): string {
  return containerProjectWith([], extra);
}

/** A container setup for a project holding `files` (written before init, e.g. a wheelhouse). */
function containerProjectWith(files: string[], extra: string[]): string {
  const dir = join(mkdtempSync(join(tmpdir(), "gpuprep-safety-")), "demo");
  mkdirSync(dir);
  writeFileSync(join(dir, "requirements.txt"), "numpy\n");
  for (const file of files) {
    mkdirSync(join(dir, file, ".."), { recursive: true });
    writeFileSync(join(dir, file), "x\n");
  }
  const base = ["--project", dir, "--target", "h100", "--driver", "580.95.05", "--strategy", "container"];
  const result = runInit([...base, ...extra]);
  assert.equal(result.code, 0, result.stderr);
  return dir;
}

function services(dir: string): Record<string, Service> {
  return (parseYaml(readFileSync(join(dir, "compose.yaml"), "utf8")) as { services: Record<string, Service> })
    .services;
}

/** What a real project holds beside its code: the issue 28 list of credentials the old denylist let through, too. */
const SECRETS = [
  ".env",
  ".env.local",
  "sub/.env.production",
  ".aws/credentials",
  ".ssh/id_ed25519",
  "server.pem",
  "sub/tls.key",
  ".netrc",
  ".pypirc",
  ".npmrc",
  ".git/config",
  "vendor/lib/.git/config",
  ".credentials/hf_token",
  "kaggle.json",
  "secrets/db.txt",
  "keys/id_rsa",
  ".git-credentials",
  ".docker/config.json",
  ".kube/config",
  ".config/gcloud/application_default_credentials.json",
  "credentials.json",
  "service-account.json",
  "client.p12",
  "client.pfx",
  ".huggingface/token",
];
/** The project itself and its environments: bind-mounted at run time, never in the image. */
const PROJECT = [
  "train.py",
  "sub/model.py",
  "requirements.txt",
  "configs/env.yaml",
  ".venv/bin/python",
  ".pixi/envs/default/x",
];
/** Exactly what the build reads. */
const BUILD_CONTEXT = ["gpuprep-constraints.txt", "gpuprep-requirements.txt"];

/** The Docker client to use where an engine answers (missing: test/support/needs.ts decides). */
function dockerAnswers(): string | null {
  // Debian's client builds with its built-in BuildKit; a newer one may insist on the buildx plugin.
  for (const docker of ["/usr/bin/docker", "docker"])
    if (spawnSync(docker, ["info"], { stdio: "ignore" }).status === 0) return docker;
  return null;
}

test(".dockerignore is an allowlist: the context holds only what the build reads (Docker's own matcher)", (t) => {
  if (needs(t, DOCKER_ENGINE)) return;
  const docker = dockerAnswers();
  assert.ok(docker, "docker info answered a moment ago");
  const dir = containerProjectWith(
    ["wheels/a-1-py3-none-any.whl", "wheels/.netrc"],
    ["--wheelhouse", "wheels"],
  );
  for (const file of [...SECRETS, ...PROJECT.filter((f) => f !== "requirements.txt")]) {
    mkdirSync(join(dir, file, ".."), { recursive: true });
    writeFileSync(join(dir, file), "x\n");
  }
  // FROM scratch + COPY . : the image holds exactly what reached the context; --output writes it out.
  const dumper = mkdtempSync(join(tmpdir(), "gpuprep-context-"));
  writeFileSync(join(dumper, "Dockerfile"), "FROM scratch\nCOPY . /ctx\n");
  const out = join(dumper, "out");
  const build = spawnSync(
    docker,
    [
      "build",
      "--network",
      "none",
      "--file",
      join(dumper, "Dockerfile"),
      "--output",
      `type=local,dest=${out}`,
      dir,
    ],
    { encoding: "utf8", env: { ...process.env, DOCKER_BUILDKIT: "1" }, timeout: 180_000 },
  );
  assert.equal(build.status, 0, build.stderr);
  assert.deepEqual(
    listFiles(join(out, "ctx")).sort(),
    [...BUILD_CONTEXT, "wheels/a-1-py3-none-any.whl"].sort(),
  );
});

test(".dockerignore excludes everything first, then allows only the files the Dockerfile copies (no Docker needed)", () => {
  const dir = containerProject();
  const patterns = readFileSync(join(dir, ".dockerignore"), "utf8")
    .split("\n")
    .filter((line) => line.trim() !== "" && !line.startsWith("#"));
  assert.equal(patterns[0], "*", "the first pattern excludes everything");
  const allowed = patterns.filter((p) => p.startsWith("!")).map((p) => p.slice(1));
  assert.deepEqual(allowed.sort(), [...BUILD_CONTEXT].sort());
  const dockerfile = readFileSync(join(dir, "Dockerfile"), "utf8");
  const copied = [...dockerfile.matchAll(/^COPY (?!--from)(\S+) /gm)].map((m) => m[1]);
  assert.deepEqual(
    copied.sort(),
    [...BUILD_CONTEXT].sort(),
    "every COPY source is allowed, nothing else is copied",
  );
  assert.doesNotMatch(dockerfile, /^COPY \. /m);
});

test("a host venv in the project never shadows the image's torch: /workspace/.venv is masked in compose and the run script", () => {
  const dir = containerProject();
  for (const service of Object.values(services(dir)))
    assert.ok(service.volumes.includes("/workspace/.venv"), service.volumes.join(", "));
  const compose = services(dir)["app"]!.volumes;
  assert.ok(
    compose.indexOf("/workspace/.venv") > compose.findIndex((v) => v.startsWith(".:/workspace")),
    "after the project mount",
  );
  assert.match(
    readFileSync(join(dir, "scripts", "run-container.sh"), "utf8"),
    /^ {2}-v \/workspace\/\.venv \\$/m,
  );
});

/** A Dockerfile's RUN commands, each with the SHELL in force for its stage (SHELL carries over FROM a stage). */
function runCommands(dockerfile: string): Array<{ shell: string[]; command: string }> {
  const logical = dockerfile.replace(/\\\n/g, "").split("\n");
  const stageShell = new Map<string, string[]>();
  let stage: string | null = null;
  let shell = ["/bin/sh", "-c"];
  const out: Array<{ shell: string[]; command: string }> = [];
  for (const line of logical) {
    const from = /^FROM (\S+)(?: AS (\S+))?/.exec(line);
    if (from) {
      shell = stageShell.get(from[1]!) ?? ["/bin/sh", "-c"];
      stage = from[2] ?? null;
      if (stage) stageShell.set(stage, shell);
      continue;
    }
    const set = /^SHELL (\[.*\])$/.exec(line);
    if (set) {
      shell = JSON.parse(set[1]!) as string[];
      if (stage) stageShell.set(stage, shell);
      continue;
    }
    const run = /^RUN (?:--mount=\S+ )*(.*)$/.exec(line);
    if (run) out.push({ shell, command: run[1]!.trim() });
  }
  return out;
}

test("every RUN pipeline stops on a failing command: a failing `pip list` cannot empty base-packages.txt", () => {
  // With a source build the freeze pipes pip list through grep; each stage's RUNs checked.
  const dir = containerProject(["--build-from-source", "xformers"]);
  const runs = runCommands(readFileSync(join(dir, "Dockerfile"), "utf8"));
  const piped = runs.filter((r) => /[^|]\|[^|]/.test(r.command));
  assert.ok(piped.length >= 2, `pipelines found: ${JSON.stringify(piped)}`);
  for (const run of runs)
    assert.ok(run.shell.includes("pipefail"), `RUN without pipefail: ${run.command.slice(0, 80)}`);
  // The freeze itself, run by its shell with a python3 whose pip list fails after printing a line.
  const freeze = runs.find((r) => r.command.includes("base-packages.txt"));
  assert.ok(freeze);
  const work = mkdtempSync(join(tmpdir(), "gpuprep-freeze-"));
  mkdirSync(join(work, "bin"));
  writeFileSync(join(work, "bin", "python3"), "#!/bin/sh\necho 'numpy==2.0.0'\nexit 1\n");
  chmodSync(join(work, "bin", "python3"), 0o755);
  const command = freeze.command.replaceAll("/opt/gpuprep", work);
  const ran = spawnSync(freeze.shell[0]!, [...freeze.shell.slice(1), command], {
    encoding: "utf8",
    env: { PATH: `${join(work, "bin")}:/usr/bin:/bin` },
  });
  assert.notEqual(ran.status, 0, "a failing pip list must fail the RUN");
});

test("jupyter: the host's 127.0.0.1 only, a token required, never root (also without --non-root)", () => {
  for (const extra of [["--jupyter"], ["--jupyter", "--non-root"]]) {
    const dir = containerProject(extra);
    const jupyter = services(dir)["jupyter"];
    assert.ok(jupyter, "a jupyter service");
    assert.ok(jupyter.ports && jupyter.ports.length > 0);
    for (const port of jupyter.ports)
      assert.match(port, /^127\.0\.0\.1:\d+:\d+$/, `published beyond loopback: ${port}`);
    const dockerfile = readFileSync(join(dir, "Dockerfile"), "utf8");
    // Not root: the service names a user, or the image's last USER is not root.
    const imageUser = [...dockerfile.matchAll(/^USER (\S+)/gm)].at(-1)?.[1] ?? "root";
    const user = jupyter.user ?? imageUser;
    assert.notEqual(user, "root");
    assert.doesNotMatch(user, /^0(:|$)/);
    assert.match(user, /GPUPREP_UID|USER_UID/, `jupyter runs as the host user's id: ${user}`);
    if (jupyter.user) assert.match(dockerfile, /useradd --uid "\$USER_UID"/, "the image has that user");
    if (jupyter.user) assert.ok(jupyter.build?.args?.["USER_UID"], "compose builds it with the host's ids");
    const command = jupyter.command ?? [];
    assert.doesNotMatch(command.join(" "), /--allow-root/);
    // The command as the container runs it (Compose turns $$ into $), with a stand-in python3.
    const standIns = makeStandIns([]);
    writeFileSync(join(standIns.bin, "python3"), `#!/bin/sh\nprintf '%s\\n' "$@" > "${standIns.cwd}/argv"\n`);
    chmodSync(join(standIns.bin, "python3"), 0o755);
    const script = command.map((part) => part.replaceAll("$$", "$"));
    assert.equal(script[0], "sh");
    const env = { PATH: `${standIns.bin}:/usr/bin:/bin` };
    const without = spawnSync(script[0], script.slice(1), { encoding: "utf8", env });
    assert.equal(without.status, 1, "no token: refuses to start");
    assert.match(without.stderr, /set JUPYTER_TOKEN to at least 32 random characters/);
    // Issue 28: a 1-character token was accepted; 31 are still too few.
    for (const token of ["t", "x".repeat(31)]) {
      const refused: { status: number | null } = spawnSync(script[0], script.slice(1), {
        encoding: "utf8",
        env: { ...env, JUPYTER_TOKEN: token },
      });
      assert.equal(refused.status, 1, `a ${token.length}-character token starts jupyter`);
    }
    const withToken = spawnSync(script[0], script.slice(1), {
      encoding: "utf8",
      env: { ...env, JUPYTER_TOKEN: "0123456789abcdef".repeat(3) },
    });
    assert.equal(withToken.status, 0, withToken.stderr);
    assert.match(readFileSync(join(standIns.cwd, "argv"), "utf8"), /^-m\njupyter\nlab\n/);
  }
});

test("credentials: mounted read-only everywhere, also over the project mount, and in the run script", () => {
  const dir = containerProject(["--jupyter"]);
  for (const [name, service] of Object.entries(services(dir))) {
    const credentials = service.volumes.filter((v) => v.split(":")[0]!.endsWith(".credentials"));
    assert.deepEqual(
      credentials.map((v) => v.split(":")[1]).sort(),
      ["/run/credentials", "/workspace/.credentials"],
      `${name}: the credentials, and a mount over their place in /workspace`,
    );
    for (const v of credentials) assert.ok(v.endsWith(":ro"), `${name}: ${v} is not read-only`);
    assert.ok(service.volumes.includes(".:/workspace"), `${name} mounts the project`);
  }
  const standIns = makeStandIns(["docker", "nvidia-smi"]);
  const run = runScript(join(dir, "scripts", "run-container.sh"), standIns, ["--no-build"]);
  assert.equal(run.code, 0, run.stderr);
  const started = standIns.calls().find((c) => c.argv[0] === "run")!.argv;
  const mounts = started.flatMap((a, i) => (started[i - 1] === "-v" ? [a] : []));
  const credentials = mounts.filter((m) => m.split(":")[0]!.endsWith("/.credentials"));
  assert.deepEqual(credentials.sort(), [
    `${dir}/.credentials:/run/credentials:ro`,
    `${dir}/.credentials:/workspace/.credentials:ro`,
  ]);
});

test("native --jupyter is refused in one line (no file would start the service)", () => {
  const dir = copyExample("unsloth-lora-dgx-spark-native");
  const result = runInit([
    "--project",
    dir,
    "--target",
    "dgx-spark",
    "--driver",
    "580",
    "--strategy",
    "native",
    "--jupyter",
  ]);
  assert.equal(result.code, 2, result.stderr);
  assert.match(
    result.stderr,
    /--jupyter adds a Jupyter service to the container setup, and this plan is native/,
  );
  assert.equal(result.stderr.trimEnd().split("\n").length, 2, result.stderr);
  assert.ok(!listFiles(dir).some((f) => f.startsWith("scripts/")), "nothing written");
});
