/**
 * init is atomic as a whole (issue 28 low): the generated files and .gpuprep/manifest.json are
 * committed together, so an init killed at any moment leaves the old set or the new one once the
 * next init has run (9 of 10 reruns used to refuse "not written by gpuprep", since files were
 * there without their manifest); the lock and temporary files of a dead init are cleaned; a full
 * disk is its own one-line error (it was "internal error" when the lock's pid could not be written).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { applyWrites, finishInterruptedInit, planWrites, sha256 } from "../../src/generate/write.js";
import type { GeneratedFile } from "../../src/generate/types.js";
import { CLI } from "../support/cli.js";

const BASE = existsSync("/dev/shm") ? "/dev/shm" : tmpdir();
const WRITE_MODULE = fileURLToPath(new URL("../../src/generate/write.js", import.meta.url));
const PATHS = [
  "Dockerfile",
  "compose.yaml",
  "scripts/run-container.sh",
  ".devcontainer/devcontainer.json",
  "setup.md",
];

/** Version `v` of the whole set: each file says which version it belongs to, and is large enough to take time. */
function fileSet(v: string): GeneratedFile[] {
  return PATHS.map((path) => ({
    path,
    content: `# ${path} version ${v}\n${v.repeat(256 * 1024)}\n`,
    executable: path.endsWith(".sh"),
    kind: "generated",
    purpose: "test",
  }));
}

function project(): string {
  const dir = join(mkdtempSync(join(BASE, "gpuprep-atomic-")), "project");
  mkdirSync(dir);
  writeFileSync(join(dir, "requirements.txt"), "torch\n");
  applyWrites(dir, planWrites(dir, fileSet("A")), false);
  return dir;
}

/** Every file is of one version, the manifest records exactly those contents, and nothing of a writer is left. */
function assertOneWholeSet(dir: string, when: string): string {
  const versions = new Set(
    PATHS.map((path) => /version (\w)/.exec(readFileSync(join(dir, path), "utf8"))?.[1] ?? "cut"),
  );
  assert.equal(versions.size, 1, `${when}: files of versions ${[...versions].join(", ")}`);
  const manifest = JSON.parse(readFileSync(join(dir, ".gpuprep", "manifest.json"), "utf8")) as {
    files: Record<string, string>;
  };
  for (const path of PATHS)
    assert.equal(
      manifest.files[path],
      sha256(readFileSync(join(dir, path), "utf8")),
      `${when}: manifest of ${path}`,
    );
  const leftovers = spawnSync(
    "find",
    [dir, "-name", "*.gpuprep-tmp", "-o", "-name", "journal.json", "-o", "-name", "lock"],
    {
      encoding: "utf8",
    },
  ).stdout;
  assert.equal(leftovers, "", `${when}: left behind`);
  return [...versions][0]!;
}

test("inits SIGKILLed at 25 moments: after the next init's recovery, always the old set or the new one, never a refusal", async () => {
  const dir = project();
  const script = `
    import { applyWrites, planWrites } from ${JSON.stringify(WRITE_MODULE)};
    const paths = ${JSON.stringify(PATHS)};
    const set = (v) => paths.map((path) => ({ path, content: "# " + path + " version " + v + "\\n" + v.repeat(256 * 1024) + "\\n", executable: path.endsWith(".sh"), kind: "generated", purpose: "test" }));
    process.stdout.write("ready\\n");
    for (let i = 1; ; i++) applyWrites(${JSON.stringify(dir)}, planWrites(${JSON.stringify(dir)}, set(i % 2 ? "B" : "A")), false);`;
  const seen = new Set<string>();
  for (let i = 0; i < 25; i++) {
    const child = spawn(process.execPath, ["--input-type=module", "-e", script], {
      stdio: ["ignore", "pipe", "inherit"],
    });
    await new Promise<void>((resolve) => child.stdout.once("data", () => resolve()));
    await new Promise((resolve) => setTimeout(resolve, 5 + ((i * 37) % 120)));
    child.kill("SIGKILL");
    await new Promise((resolve) => child.once("exit", resolve));
    finishInterruptedInit(dir);
    seen.add(assertOneWholeSet(dir, `kill ${i}`));
    // The next init goes through: nothing is "not written by gpuprep" or "edited".
    const plans = planWrites(dir, fileSet("A"));
    assert.deepEqual(
      plans.filter((p) => p.status === "foreign" || p.status === "edited").map((p) => p.file.path),
      [],
      `kill ${i}`,
    );
  }
  assert.ok(seen.size >= 1);
});

test("a committed journal is finished by the next init; staged files without a journal are removed", () => {
  const dir = project();
  // An init that staged B and wrote its journal, then died before any rename.
  const staged = PATHS.map((path) => {
    const temp = `.${path.split("/").at(-1)}.999999.0123abcd.gpuprep-tmp`;
    const where = join(dir, path, "..", temp);
    writeFileSync(where, fileSet("B").find((f) => f.path === path)!.content);
    return { path, temp };
  });
  const manifest = {
    tool: "gpuprep",
    files: Object.fromEntries(fileSet("B").map((f) => [f.path, sha256(f.content)])),
  };
  const manifestTemp = ".manifest.json.999999.0123abcd.gpuprep-tmp";
  writeFileSync(join(dir, ".gpuprep", manifestTemp), JSON.stringify(manifest));
  staged.push({ path: ".gpuprep/manifest.json", temp: manifestTemp });
  writeFileSync(join(dir, ".gpuprep", "journal.json"), JSON.stringify({ tool: "gpuprep", renames: staged }));
  writeFileSync(join(dir, ".gpuprep", "lock"), "999999\n");
  assert.equal(finishInterruptedInit(dir), true);
  assert.equal(assertOneWholeSet(dir, "journal"), "B");

  // Staged, no journal: the old set stays and the temporary files go.
  const orphan = join(dir, "scripts", ".run-container.sh.999999.0123abcd.gpuprep-tmp");
  writeFileSync(orphan, "half");
  assert.equal(finishInterruptedInit(dir), true);
  assert.equal(existsSync(orphan), false);
  assert.equal(assertOneWholeSet(dir, "no journal"), "B");
});

/** Runs `init` with the project on a tmpfs of `sizeKiB`, made full except `freeBytes`, in a private mount namespace. */
function initOnFullDisk(freeBytes: number): {
  code: number | null;
  stdout: string;
  stderr: string;
  listing: string;
} {
  const mountPoint = mkdtempSync(join(tmpdir(), "gpuprep-full-"));
  const script = [
    "set -e",
    `mount -t tmpfs -o size=256k tmpfs ${mountPoint}`,
    `mkdir ${mountPoint}/p`,
    `printf 'numpy\\n' > ${mountPoint}/p/requirements.txt`,
    // Fill the disk, then free exactly `freeBytes`.
    `head -c 1000000 /dev/zero > ${mountPoint}/filler 2>/dev/null || true`,
    `truncate -s -${freeBytes} ${mountPoint}/filler`,
    "set +e",
    `${process.execPath} ${CLI} init --project ${mountPoint}/p --target h100 --driver 580.95.05 --strategy container`,
    'echo "EXIT $?"',
    `find ${mountPoint}/p | sort`,
  ].join("\n");
  const run = spawnSync("unshare", ["-rm", "sh", "-c", script], {
    encoding: "utf8",
    env: { ...process.env, NO_COLOR: "1" },
  });
  const code = /EXIT (\d+)/.exec(run.stdout)?.[1];
  return {
    code: code === undefined ? null : Number(code),
    stdout: run.stdout,
    stderr: run.stderr,
    listing: run.stdout.split(/EXIT \d+\n/)[1] ?? "",
  };
}

test("a full disk: one line naming ENOSPC, no lock, no temporary file, none of the new files", (t) => {
  if (spawnSync("unshare", ["-rm", "true"]).status !== 0) {
    t.skip("no user and mount namespaces here (unshare -rm): cannot make a full tmpfs");
    return;
  }
  for (const free of [0, 2048, 8192, 20000]) {
    const result = initOnFullDisk(free);
    assert.equal(result.code, 2, `${free} bytes free: ${result.stderr}`);
    assert.match(
      result.stderr,
      /^gpuprep: error: cannot write .*: the disk is full \(ENOSPC\)\n {2}hint: free space/,
      `${free} bytes free`,
    );
    assert.doesNotMatch(result.stderr, /internal error/);
    const files = result.listing.split("\n").filter((line) => line !== "");
    const inProject = files
      .map((path) => path.replace(/^.*\/p(\/|$)/, ""))
      .filter((p) => p !== "" && p !== ".gpuprep");
    assert.deepEqual(inProject, ["requirements.txt"], `${free} bytes free left: ${inProject.join(", ")}`);
  }
});

test("silent case: an init on a disk with room writes the whole set and its manifest", () => {
  const dir = project();
  assert.equal(assertOneWholeSet(dir, "clean"), "A");
  assert.deepEqual(readdirSync(join(dir, ".gpuprep")).sort(), ["manifest.json"]);
});
