/**
 * Writing generated files into a project a cloned repository may have booby-trapped: links
 * anywhere on the way are refused (with --force too), writes are atomic, a full disk names
 * itself, and two writers cannot interleave.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync, spawn, spawnSync } from "node:child_process";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readFileSync,
  readdirSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
  writeSync,
  closeSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { UserError } from "../errors.js";
import { applyWrites, planWrites } from "./write.js";
import type { GeneratedFile } from "./types.js";
import { writeFailure, writeFileAtomic, writeProjectFile } from "../util/safe-write.js";
import { acquireProjectLock } from "../util/project-lock.js";
import { needs, onCi, ROOT } from "../../test/support/needs.js";

function generated(path: string, content = `# ${path}\n`): GeneratedFile {
  return { path, content, executable: path.endsWith(".sh"), kind: "generated", purpose: "test" };
}

const FILES = [
  generated("Dockerfile"),
  generated("compose.yaml"),
  generated("scripts/run-container.sh"),
  generated(".devcontainer/devcontainer.json"),
];

/** A project dir and, beside it, a directory standing for the rest of the user's disk. */
function layout(): { project: string; outside: string } {
  const root = mkdtempSync(join(tmpdir(), "gpuprep-write-"));
  const project = join(root, "project");
  const outside = join(root, "outside");
  mkdirSync(project);
  mkdirSync(outside);
  writeFileSync(join(project, "requirements.txt"), "torch\n");
  writeFileSync(join(outside, "victim"), "precious\n");
  return { project, outside };
}

function init(project: string, force: boolean): void {
  applyWrites(project, planWrites(project, FILES), force);
}

function outsideUntouched(outside: string, expected: string[]): void {
  assert.deepEqual(readdirSync(outside).sort(), expected.sort());
  assert.equal(readFileSync(join(outside, "victim"), "utf8"), "precious\n");
}

const cases: Array<{
  name: string;
  plant: (p: string, o: string) => void;
  names: RegExp;
  outsideAfter: string[];
}> = [
  {
    name: "a file link at a generated path",
    plant: (p, o) => symlinkSync(join(o, "victim"), join(p, "Dockerfile")),
    names: /Dockerfile is a symbolic link/,
    outsideAfter: ["victim"],
  },
  {
    name: "a dangling link at a generated path",
    plant: (p, o) => symlinkSync(join(o, "created-by-init"), join(p, "compose.yaml")),
    names: /compose\.yaml is a symbolic link/,
    outsideAfter: ["victim"],
  },
  {
    name: "a linked scripts/ directory",
    plant: (p, o) => {
      mkdirSync(join(o, "dir"));
      symlinkSync(join(o, "dir"), join(p, "scripts"));
    },
    names: /scripts is a symbolic link/,
    outsideAfter: ["victim", "dir"],
  },
  {
    name: "a linked .devcontainer/ directory (dangling)",
    plant: (p, o) => symlinkSync(join(o, "devc"), join(p, ".devcontainer")),
    names: /\.devcontainer is a symbolic link/,
    outsideAfter: ["victim"],
  },
  {
    name: "a linked .gpuprep/ directory",
    plant: (p, o) => {
      mkdirSync(join(o, "gp"));
      symlinkSync(join(o, "gp"), join(p, ".gpuprep"));
    },
    names: /\.gpuprep is a symbolic link/,
    outsideAfter: ["victim", "gp"],
  },
];

for (const { name, plant, names, outsideAfter } of cases) {
  test(`refused, --force included: ${name}`, () => {
    for (const force of [false, true]) {
      const { project, outside } = layout();
      plant(project, outside);
      assert.throws(
        () => init(project, force),
        (e: unknown) => e instanceof UserError && names.test(e.message) && !e.message.includes("\n"),
      );
      outsideUntouched(outside, outsideAfter);
      if (outsideAfter.includes("dir")) assert.deepEqual(readdirSync(join(outside, "dir")), []);
      if (outsideAfter.includes("gp")) assert.deepEqual(readdirSync(join(outside, "gp")), []);
      // Refused before anything was written: no generated file appeared in the project either.
      assert.equal(existsSync(join(project, ".gpuprep", "manifest.json")), false);
    }
  });
}

test("a FIFO at a generated path or as manifest.json is refused at once", () => {
  const { project } = layout();
  execFileSync("mkfifo", [join(project, "Dockerfile")]);
  assert.throws(() => init(project, true), /Dockerfile is not a regular file/);
  rmSync(join(project, "Dockerfile"));
  mkdirSync(join(project, ".gpuprep"));
  execFileSync("mkfifo", [join(project, ".gpuprep", "manifest.json")]);
  assert.throws(() => init(project, true), /manifest\.json is not a regular file/);
});

test("a clean project is written, modes kept, no temporary files left", () => {
  const { project } = layout();
  writeFileSync(join(project, "Dockerfile"), "old\n", { mode: 0o600 });
  init(project, true);
  assert.equal(readFileSync(join(project, "Dockerfile"), "utf8"), "# Dockerfile\n");
  assert.equal(statSync(join(project, "Dockerfile")).mode & 0o777, 0o600);
  assert.equal(statSync(join(project, "scripts/run-container.sh")).mode & 0o777, 0o755);
  const all = execFileSync("find", [project], { encoding: "utf8" });
  assert.doesNotMatch(all, /gpuprep-tmp/);
  assert.equal(existsSync(join(project, ".gpuprep", "lock")), false);
  assert.ok(existsSync(join(project, ".gpuprep", "backups")));
});

const distModule = (name: string) => fileURLToPath(new URL(name, import.meta.url));

test("SIGKILL in the middle of writes: the target is always one whole version", async () => {
  const { project } = layout();
  const target = join(project, "pyproject.toml");
  const versions = ["a", "b"].map((c) => `${c}`.repeat(32 * 1024 * 1024));
  writeFileSync(target, versions[0]!);
  const script = `
    import { writeFileAtomic } from ${JSON.stringify(distModule("../util/safe-write.js"))};
    const versions = ["a", "b"].map((c) => c.repeat(32 * 1024 * 1024));
    process.stdout.write("ready\\n");
    for (let i = 1; ; i++) writeFileAtomic(${JSON.stringify(target)}, versions[i % 2]);`;
  for (const delay of [15, 40, 70, 110, 160, 230]) {
    const child = spawn(process.execPath, ["--input-type=module", "-e", script], {
      stdio: ["ignore", "pipe", "inherit"],
    });
    await new Promise<void>((resolve) => child.stdout.once("data", () => resolve()));
    await new Promise((resolve) => setTimeout(resolve, delay));
    child.kill("SIGKILL");
    await new Promise((resolve) => child.once("exit", resolve));
    const content = readFileSync(target, "utf8");
    assert.ok(
      versions.includes(content),
      `after SIGKILL at ${delay} ms the file holds ${content.length} bytes`,
    );
  }
});

test("a write that fails (ENOSPC on a 64 KiB tmpfs) keeps the original, leaves no temp file, and says the disk is full", (t) => {
  if (needs(t, ROOT)) return;
  const mountPoint = mkdtempSync(join(tmpdir(), "gpuprep-tmpfs-"));
  const mounted = spawnSync("mount", ["-t", "tmpfs", "-o", "size=64k", "tmpfs", mountPoint]);
  if (mounted.status !== 0) {
    // Root without CAP_SYS_ADMIN (inside a container); CI's machine can mount, so there it fails.
    const why = `mount -t tmpfs failed as root: ${String(mounted.stderr).trim()} (needs CAP_SYS_ADMIN)`;
    if (onCi()) assert.fail(why);
    t.skip(why);
    return;
  }
  try {
    mkdirSync(join(mountPoint, "project"));
    const original = '[project]\nname = "demo"\n';
    writeFileSync(join(mountPoint, "project", "pyproject.toml"), original);
    assert.throws(
      () => writeProjectFile(join(mountPoint, "project"), "pyproject.toml", "x".repeat(256 * 1024)),
      (e: unknown) =>
        e instanceof UserError &&
        /the disk is full \(ENOSPC\)/.test(e.message) &&
        /free space/.test(e.hint ?? ""),
    );
    assert.equal(readFileSync(join(mountPoint, "project", "pyproject.toml"), "utf8"), original);
    assert.deepEqual(readdirSync(join(mountPoint, "project")), ["pyproject.toml"]);
    // A generated file that did not exist leaves nothing behind either (no 0-byte file to block the next run).
    assert.throws(() => writeProjectFile(join(mountPoint, "project"), "Dockerfile", "y".repeat(256 * 1024)));
    assert.deepEqual(readdirSync(join(mountPoint, "project")), ["pyproject.toml"]);
  } finally {
    spawnSync("umount", [mountPoint]);
  }
});

test("a real ENOSPC (/dev/full) and EROFS/EACCES map to their own hints", () => {
  let enospc: unknown;
  const fd = openSync("/dev/full", "w");
  try {
    writeSync(fd, "x");
  } catch (error) {
    enospc = error;
  } finally {
    closeSync(fd);
  }
  assert.match(writeFailure("/p/pyproject.toml", enospc, "fallback").message, /the disk is full/);
  assert.match(
    writeFailure("/p/x", Object.assign(new Error("x"), { code: "EROFS" }), "f").message,
    /read-only/,
  );
  assert.match(writeFailure("/p/x", Object.assign(new Error("x"), { code: "EDQUOT" }), "f").message, /quota/);
  const eacces = writeFailure("/p/x", Object.assign(new Error("x"), { code: "EACCES" }), "f");
  assert.match(eacces.message, /permission denied/);
  assert.doesNotMatch(eacces.hint ?? "", /disk/);
});

test("writeFileAtomic never opens the target path: a link there is replaced, its target untouched", () => {
  const { project, outside } = layout();
  symlinkSync(join(outside, "victim"), join(project, "out.json"));
  writeFileAtomic(join(project, "out.json"), "{}\n");
  assert.equal(readFileSync(join(outside, "victim"), "utf8"), "precious\n");
  assert.equal(readFileSync(join(project, "out.json"), "utf8"), "{}\n");
});

test("the lock: a second writer stops with a clear line; a stale lock (dead pid) is taken over", () => {
  const { project } = layout();
  const release = acquireProjectLock(project);
  assert.equal(readFileSync(join(project, ".gpuprep", "lock"), "utf8").trim(), String(process.pid));
  assert.throws(
    () => init(project, false),
    (e: unknown) => e instanceof UserError && e.message.includes(`another gpuprep (pid ${process.pid})`),
  );
  release();
  assert.equal(existsSync(join(project, ".gpuprep", "lock")), false);
  const dead = spawnSync("true").pid;
  writeFileSync(join(project, ".gpuprep", "lock"), `${dead}\n`);
  init(project, false);
  assert.equal(readFileSync(join(project, "Dockerfile"), "utf8"), "# Dockerfile\n");
  assert.equal(existsSync(join(project, ".gpuprep", "lock")), false);
});
