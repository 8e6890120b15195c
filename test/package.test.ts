/**
 * The published package, as a user gets it: `npm pack` through the real lifecycle (prepack builds
 * src/ without tests or source maps and strips `prepare`, postpack restores it) in a copy of this
 * repository, then a global install of the tarball into a temporary prefix, then `gpuprep doctor`
 * from an empty directory.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  rmSync,
  statSync,
  symlinkSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { extname, join, posix, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { DEBIAN_PYTHON } from "./support/venv.js";
import { schemaErrors } from "./support/json-schemas.js";

const repoRoot = fileURLToPath(new URL("../../", import.meta.url));
const COPIED = [
  "package.json",
  "package-lock.json",
  "tsconfig.json",
  "tsconfig.publish.json",
  "README.md",
  "LICENSE",
  "scripts",
  "src",
  "test",
  "bench",
  "docs",
  "schemas",
];

function run(command: string, args: string[], cwd: string, env: NodeJS.ProcessEnv = process.env) {
  const result = spawnSync(command, args, { cwd, encoding: "utf8", env, timeout: 300_000 });
  return { code: result.status, stdout: result.stdout ?? "", stderr: result.stderr ?? "" };
}

function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? filesUnder(path) : [path];
  });
}

/**
 * What the CLI reads at run time besides its code: every non-TypeScript file under src/ (scripts
 * /copy-assets.mjs copies them into dist/), and each file a module opens through
 * `new URL("./x", import.meta.url)`, resolved as it will be inside dist/src.
 */
function runtimeFiles(): string[] {
  const src = join(repoRoot, "src");
  const needed = new Set<string>();
  for (const file of filesUnder(src)) {
    const rel = relative(src, file).split("\\").join("/");
    if (!file.endsWith(".ts")) needed.add(`dist/src/${rel}`);
    else if (!file.endsWith(".test.ts"))
      for (const match of readFileSync(file, "utf8").matchAll(
        /new URL\(\s*"(\.{1,2}\/[^"]+)",\s*import\.meta\.url/g,
      )) {
        const target = posix.normalize(posix.join("dist/src", posix.dirname(rel), match[1]!));
        // ../../package.json from dist/src/x.js is the package's own manifest, always shipped.
        needed.add(target.startsWith("package.json") ? "package.json" : target);
      }
  }
  return [...needed].sort();
}

test("npm pack ships code and runtime files only, installs globally without warnings, and doctor runs", () => {
  const work = mkdtempSync(join(tmpdir(), "gpuprep-pack-"));
  try {
    const copy = join(work, "repo");
    mkdirSync(copy);
    for (const name of COPIED) cpSync(join(repoRoot, name), join(copy, name), { recursive: true });
    symlinkSync(join(repoRoot, "node_modules"), join(copy, "node_modules"));
    const manifestBefore = readFileSync(join(copy, "package.json"), "utf8");

    const pack = run("npm", ["pack", "--json", "--pack-destination", work], copy);
    assert.equal(pack.code, 0, pack.stderr);
    const [info] = JSON.parse(pack.stdout.slice(pack.stdout.indexOf("["))) as {
      filename: string;
      files: { path: string }[];
    }[];
    assert.ok(info);
    const paths = info.files.map((file) => file.path);
    assert.deepEqual(
      paths.filter((p) => /\.test\.|^test\/|^bench\/|\.map$|\.ts$/.test(p) && !p.endsWith(".d.ts")),
      [],
      "tests, benchmarks, sources or maps in the tarball",
    );
    // Every shipped module has its source: a stale dist/ file of a deleted module must not ship.
    for (const path of paths.filter((p) => p.startsWith("dist/src/") && p.endsWith(".js")))
      assert.ok(
        existsSync(join(copy, path.slice("dist/".length, -".js".length) + ".ts")),
        `${path} has no source`,
      );
    for (const needed of ["LICENSE", "README.md", "package.json", "dist/src/cli/main.js", ...runtimeFiles()])
      assert.ok(paths.includes(needed), `${needed} missing from the tarball`);
    assert.ok(paths.includes("dist/src/kb/data/gpus.json") && paths.includes("dist/src/probe/probe.py"));
    // The JSON Schemas of every --json document ship with the package (docs/json.md), and the
    // library's page (docs/library.md).
    const shippedSchemas = readdirSync(join(repoRoot, "schemas")).map((name) => `schemas/${name}`);
    assert.ok(shippedSchemas.length >= 10, "schemas/ is empty");
    for (const needed of [...shippedSchemas, "docs/json.md", "docs/library.md"])
      assert.ok(paths.includes(needed), `${needed} missing from the tarball`);
    assert.equal(
      readFileSync(join(copy, "package.json"), "utf8"),
      manifestBefore,
      "postpack must restore package.json",
    );

    const prefix = join(work, "prefix");
    const install = run(
      "npm",
      [
        "install",
        "-g",
        "--prefix",
        prefix,
        "--prefer-offline",
        "--no-audit",
        "--no-fund",
        join(work, info.filename),
      ],
      work,
    );
    assert.equal(install.code, 0, install.stderr);
    assert.doesNotMatch(
      install.stdout + install.stderr,
      /script|prepare|allowScripts/i,
      "installing the tarball warns about (or runs) a lifecycle script",
    );
    const installed = join(prefix, "lib", "node_modules", "gpuprep");
    const installedManifest = JSON.parse(readFileSync(join(installed, "package.json"), "utf8")) as {
      scripts?: Record<string, string>;
      repository?: { url: string };
      homepage?: string;
      bugs?: { url: string };
    };
    assert.equal(installedManifest.scripts?.prepare, undefined);
    assert.ok(installedManifest.repository?.url && installedManifest.homepage && installedManifest.bugs?.url);
    // Maps are off in the published build: no shipped module names a map that is not there.
    for (const file of filesUnder(join(installed, "dist")).filter((f) => extname(f) === ".js"))
      assert.doesNotMatch(readFileSync(file, "utf8"), /sourceMappingURL/, relative(installed, file));

    const empty = join(work, "empty");
    mkdirSync(empty);
    const doctor = run(
      join(prefix, "bin", "gpuprep"),
      ["doctor", "--python", DEBIAN_PYTHON, "--json"],
      empty,
      {
        ...process.env,
        VIRTUAL_ENV: "",
      },
    );
    assert.ok(doctor.code === 0 || doctor.code === 1, `doctor exited ${doctor.code}: ${doctor.stderr}`);
    const report = JSON.parse(doctor.stdout) as {
      schema: string;
      schemaVersion: number;
      findings: { docs: string }[];
    };
    assert.equal(report.schema, "gpuprep.doctor");
    assert.equal(report.schemaVersion, 2);
    // The installed package's own schema file accepts what the installed gpuprep prints.
    assert.deepEqual(schemaErrors(report, "shipped", join(installed, "schemas")), []);
    for (const finding of report.findings) assert.match(finding.docs, /^https:\/\/github\.com\/.+\/blob\/v/);
    assert.deepEqual(readdirSync(empty), [], "doctor wrote into the directory it ran in");
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
});
