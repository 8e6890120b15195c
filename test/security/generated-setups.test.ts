/**
 * The generated container setup's properties of issue 28 (low), asserted on the files init writes
 * and on what the run script really passes to docker (stand-in docker), not on golden files:
 * the Hugging Face login token never mounted (HF_TOKEN from the environment), the app as the host
 * user unless --root, `ipc: host` only with --shm-size host (else a sized /dev/shm), and the base
 * image pinned by digest where the knowledge base has one, by tag with a note where it has none;
 * Jupyter's token floor (the compose command run with sh) and credentials read-only everywhere.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parse as parseYaml } from "yaml";
import { runInit } from "../init/helpers.js";
import { makeStandIns, runScript } from "../init/standins.js";
import { renderDockerfile } from "../../src/generate/dockerfile.js";
import type { ContainerPlan } from "../../src/plan/types.js";
import { makePlan } from "../../src/plan/index.js";
import { DEFAULT_INIT_OPTIONS } from "../../src/plan/default-options.js";
import { loadKnowledgeBase } from "../../src/kb/index.js";
import { ngcImageRowSchema } from "../../src/kb/schema.js";
import { readProject } from "../../src/gather/project.js";
import { targetFromName } from "../../src/plan/target.js";

interface Service {
  volumes: string[];
  user?: string;
  ipc?: string;
  shm_size?: string;
  environment?: string[];
}

function containerSetup(extra: string[] = []): string {
  const dir = join(mkdtempSync(join(tmpdir(), "gpuprep-setups-")), "demo");
  mkdirSync(dir);
  writeFileSync(join(dir, "requirements.txt"), "numpy\n");
  const result = runInit([
    "--project",
    dir,
    "--target",
    "h100",
    "--driver",
    "580.95.05",
    "--strategy",
    "container",
    ...extra,
  ]);
  assert.equal(result.code, 0, result.stderr);
  return dir;
}

function services(dir: string): Record<string, Service> {
  return (parseYaml(readFileSync(join(dir, "compose.yaml"), "utf8")) as { services: Record<string, Service> })
    .services;
}

/** The `docker run` argv the run script produces, with stand-in docker and nvidia-smi. */
function dockerRun(dir: string): string[] {
  const standIns = makeStandIns(["docker", "nvidia-smi"]);
  const run = runScript(join(dir, "scripts", "run-container.sh"), standIns, ["--no-build"]);
  assert.equal(run.code, 0, run.stderr);
  return standIns.calls().find((c) => c.argv[0] === "run")!.argv;
}

const mountsOf = (argv: string[]) => argv.flatMap((a, i) => (argv[i - 1] === "-v" ? [a] : []));

test("the Hugging Face login token is never mounted; HF_TOKEN comes from the environment", () => {
  const dir = containerSetup(["--jupyter"]);
  const hostSides = [
    ...Object.values(services(dir)).flatMap((s) => s.volumes.map((v) => v.split(":")[0]!)),
    ...mountsOf(dockerRun(dir)).map((m) => m.split(":")[0]!),
  ];
  for (const host of hostSides) {
    // ~/.cache/huggingface itself (which holds `token` and `stored_tokens`) or the token file.
    assert.doesNotMatch(host, /\.cache\/huggingface\/?$|huggingface\/(stored_)?tokens?$/, host);
  }
  assert.ok(
    hostSides.some((h) => h.endsWith(".cache/huggingface/hub")),
    "the model cache is still shared",
  );
  for (const service of Object.values(services(dir))) assert.ok(service.environment?.includes("HF_TOKEN"));
  assert.ok(dockerRun(dir).join(" ").includes("-e HF_TOKEN"));
  assert.match(readFileSync(join(dir, "SETUP.md"), "utf8"), /HF_TOKEN/);
});

test("the app runs as the host user by default, in compose and in the run script; --root is asked for", () => {
  const dir = containerSetup();
  assert.match(services(dir)["app"]!.user ?? "", /^\$\{GPUPREP_UID:-1000\}:\$\{GPUPREP_GID:-1000\}$/);
  const argv = dockerRun(dir);
  const user = argv[argv.indexOf("--user") + 1];
  assert.equal(user, `${process.getuid!()}:${process.getgid!()}`);
  assert.match(readFileSync(join(dir, "Dockerfile"), "utf8"), /^USER \$\{USER_UID\}:\$\{USER_GID\}$/m);

  const root = containerSetup(["--root"]);
  assert.equal(services(root)["app"]!.user, undefined);
  assert.ok(!dockerRun(root).includes("--user"));
  assert.doesNotMatch(readFileSync(join(root, "Dockerfile"), "utf8"), /^USER /m);
});

test("ipc: host only with --shm-size host; by default a 16g /dev/shm, with the reason in SETUP.md", () => {
  const dir = containerSetup();
  const app = services(dir)["app"]!;
  assert.deepEqual([app.ipc, app.shm_size], [undefined, "16g"]);
  const argv = dockerRun(dir);
  assert.ok(argv.includes("--shm-size=16g") && !argv.includes("--ipc=host"), argv.join(" "));
  assert.match(
    readFileSync(join(dir, "SETUP.md"), "utf8"),
    /shm_size 16g[\s\S]*bus error[\s\S]*--shm-size host/,
  );

  const host = containerSetup(["--shm-size", "host"]);
  assert.deepEqual([services(host)["app"]!.ipc, services(host)["app"]!.shm_size], ["host", undefined]);
  assert.ok(dockerRun(host).includes("--ipc=host"));
  const sized = containerSetup(["--shm-size", "8g"]);
  assert.equal(services(sized)["app"]!.shm_size, "8g");
});

/** The jupyter service's command as the container's sh runs it (Compose turns $$ into $). */
function jupyterCommand(dir: string): string[] {
  const command = (services(dir)["jupyter"] as Service & { command: string[] }).command;
  return command.map((part) => part.replaceAll("$$", "$"));
}

test("jupyter refuses a token shorter than 32 characters; 32 start it (the compose command, run with sh)", () => {
  const script = jupyterCommand(containerSetup(["--jupyter"]));
  assert.equal(script[0], "sh");
  const standIns = makeStandIns([]);
  writeFileSync(join(standIns.bin, "python3"), `#!/bin/sh\nprintf '%s\\n' "$@" > "${standIns.cwd}/argv"\n`);
  chmodSync(join(standIns.bin, "python3"), 0o755);
  const started = (token: string | undefined) => {
    rmSync(join(standIns.cwd, "argv"), { force: true });
    const env: Record<string, string> = { PATH: `${standIns.bin}:/usr/bin:/bin` };
    if (token !== undefined) env["JUPYTER_TOKEN"] = token;
    const run = spawnSync(script[0]!, script.slice(1), { encoding: "utf8", env });
    return { status: run.status, stderr: run.stderr, ran: existsSync(join(standIns.cwd, "argv")) };
  };
  for (const token of [undefined, "", "t", "x".repeat(31)]) {
    const run = started(token);
    assert.deepEqual([run.status, run.ran], [1, false], `a ${token?.length ?? "missing"}-character token`);
    assert.match(run.stderr, /at least 32 random characters/);
  }
  for (const token of ["x".repeat(32), "0123456789abcdef".repeat(3)]) {
    const run = started(token);
    assert.deepEqual([run.status, run.ran], [0, true], `${token.length} characters: ${run.stderr}`);
  }
});

test("credentials are mounted read-only in every service and in the run script, also over the project mount", () => {
  for (const extra of [[], ["--jupyter"], ["--root"], ["--volume", "/srv/x:/x"]]) {
    const dir = containerSetup(extra);
    const composeMounts = Object.values(services(dir)).flatMap((s) => s.volumes);
    const runMounts = mountsOf(dockerRun(dir));
    for (const mounts of [composeMounts, runMounts]) {
      const credentials = mounts.filter((m) => /\.credentials"?$/.test(m.split(":")[0]!));
      assert.ok(credentials.length >= 2, `${extra.join(" ")}: ${mounts.join(" ")}`);
      for (const m of credentials) assert.match(m, /:ro$/, `${extra.join(" ")}: ${m} is writable`);
      // The project mount shows .credentials at /workspace/.credentials: a read-only mount covers it.
      assert.ok(
        credentials.some((m) => m.split(":")[1] === "/workspace/.credentials"),
        `${extra.join(" ")}: /workspace/.credentials is left writable through the project mount`,
      );
    }
  }
});

function h100Plan(kb: ReturnType<typeof loadKnowledgeBase>): ContainerPlan {
  const dir = mkdtempSync(join(tmpdir(), "gpuprep-digest-"));
  writeFileSync(join(dir, "requirements.txt"), "numpy\n");
  return makePlan(
    kb,
    readProject(dir),
    targetFromName(kb, { gpu: "h100", driver: "580.95.05", cpuArch: null, flag: "--target" }),
    { ...DEFAULT_INIT_OPTIONS, strategy: "container" },
  ) as ContainerPlan;
}

test("the base image: FROM by digest where the knowledge base row has one, by tag with a note where not", () => {
  const kb = loadKnowledgeBase();
  const byTag = renderDockerfile(h100Plan(kb));
  assert.match(byTag, /^ARG BASE_IMAGE=nvcr\.io\/nvidia\/pytorch:\d\d\.\d\d-py3$/m);
  assert.match(byTag, /^# Pinned by tag: the knowledge base has no digest for it\. To pin/m);
  assert.match(byTag, /`docker buildx imagetools inspect nvcr\.io\/nvidia\/pytorch:\d\d\.\d\d-py3` prints/);
  assert.doesNotMatch(byTag, /@sha256:/);

  // The same plan once the KB row of the chosen tag carries a digest: FROM pins it.
  const row = kb.ngcImage(h100Plan(kb).container.image.image)!;
  const digest = `sha256:${"ab".repeat(32)}`;
  row.digest = { value: digest, source: "a test\nRUN echo injected" };
  const pinned = renderDockerfile(h100Plan(kb));
  assert.match(pinned, new RegExp(`^ARG BASE_IMAGE=nvcr\\.io/nvidia/pytorch:${row.tag}-py3@${digest}$`, "m"));
  assert.match(pinned, /^FROM \$\{BASE_IMAGE\} AS base$/m);
  assert.doesNotMatch(pinned, /no digest/);
  assert.doesNotMatch(pinned, /^RUN echo injected/m, "the source is one comment line");

  // The KB's schema takes only a sha256 digest: nothing else reaches the FROM line.
  const base = { ...row, digest: undefined };
  assert.ok(ngcImageRowSchema.safeParse({ ...base, digest: { value: digest, source: "x" } }).success);
  for (const value of ["sha256:AB", `sha256:${"ab".repeat(32)}\nRUN id`, "latest", `md5:${"ab".repeat(16)}`])
    assert.ok(!ngcImageRowSchema.safeParse({ ...base, digest: { value, source: "x" } }).success, value);
});
