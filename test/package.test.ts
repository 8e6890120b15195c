/**
 * The published package, as a user gets it: `npm pack` through the real lifecycle (prepack builds
 * and strips `prepare`, postpack restores it) in a copy of this repository, then a global install
 * of the tarball into a temporary prefix, then `gpuprep doctor` from an empty directory.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { cpSync, mkdtempSync, readFileSync, readdirSync, rmSync, symlinkSync, mkdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const repoRoot = fileURLToPath(new URL("../../", import.meta.url));
const COPIED = [
  "package.json",
  "package-lock.json",
  "tsconfig.json",
  "README.md",
  "LICENSE",
  "scripts",
  "src",
  "test",
  "bench",
  "docs",
];

function run(command: string, args: string[], cwd: string, env: NodeJS.ProcessEnv = process.env) {
  const result = spawnSync(command, args, { cwd, encoding: "utf8", env, timeout: 240_000 });
  return { code: result.status, stdout: result.stdout ?? "", stderr: result.stderr ?? "" };
}

test("npm pack ships no tests or source maps, has LICENSE, installs globally without warnings, and doctor runs", () => {
  const work = mkdtempSync(join(tmpdir(), "gpuprep-pack-"));
  try {
    const copy = join(work, "repo");
    mkdirSync(copy);
    for (const name of COPIED) cpSync(join(repoRoot, name), join(copy, name), { recursive: true });
    symlinkSync(join(repoRoot, "node_modules"), join(copy, "node_modules"));
    const manifestBefore = readFileSync(join(copy, "package.json"), "utf8");

    const pack = run("npm", ["pack", "--json"], copy);
    assert.equal(pack.code, 0, pack.stderr);
    const [info] = JSON.parse(pack.stdout.slice(pack.stdout.indexOf("["))) as {
      filename: string;
      files: { path: string }[];
    }[];
    assert.ok(info);
    const paths = info.files.map((file) => file.path);
    assert.deepEqual(
      paths.filter((p) => /\.test\.|^test\/|\.map$/.test(p)),
      [],
      "tests or maps in the tarball",
    );
    for (const needed of [
      "LICENSE",
      "README.md",
      "dist/src/cli/main.js",
      "dist/src/probe/probe.py",
      "docs/rules/torch-not-installed.md",
    ])
      assert.ok(paths.includes(needed), `${needed} missing from the tarball`);
    assert.equal(
      readFileSync(join(copy, "package.json"), "utf8"),
      manifestBefore,
      "postpack must restore package.json",
    );

    const prefix = join(work, "prefix");
    const install = run("npm", ["install", "-g", "--prefix", prefix, join(copy, info.filename)], work);
    assert.equal(install.code, 0, install.stderr);
    assert.doesNotMatch(
      install.stderr,
      /install-scripts|prepare/,
      "installing the tarball warns about a lifecycle script",
    );
    const installedManifest = JSON.parse(
      readFileSync(join(prefix, "lib", "node_modules", "gpuprep", "package.json"), "utf8"),
    ) as { scripts?: Record<string, string> };
    assert.equal(installedManifest.scripts?.prepare, undefined);

    const empty = join(work, "empty");
    mkdirSync(empty);
    const doctor = run(join(prefix, "bin", "gpuprep"), ["doctor", "--fast", "--json"], empty, {
      ...process.env,
      VIRTUAL_ENV: "",
    });
    assert.ok(doctor.code === 0 || doctor.code === 1, `doctor exited ${doctor.code}: ${doctor.stderr}`);
    assert.equal((JSON.parse(doctor.stdout) as { schema: string }).schema, "gpuprep.doctor");
    assert.deepEqual(readdirSync(empty), [], "doctor wrote into the directory it ran in");
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
});
