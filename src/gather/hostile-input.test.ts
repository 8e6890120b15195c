/**
 * Project manifests from a repository nobody reviewed: FIFOs, links to secrets, enormous lines.
 * Each must end promptly in a one-line UserError that quotes nothing it should not.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { UserError } from "../errors.js";
import { readProject } from "./project.js";
import { parseRequirement } from "./requirement.js";

function project(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), "gpuprep-hostile-"));
  for (const [name, content] of Object.entries(files)) {
    mkdirSync(join(dir, name, ".."), { recursive: true });
    writeFileSync(join(dir, name), content);
  }
  return dir;
}

function oneLineError(run: () => unknown, pattern: RegExp): UserError {
  let caught: unknown;
  try {
    run();
  } catch (error) {
    caught = error;
  }
  assert.ok(caught instanceof UserError, `expected a UserError, got ${String(caught)}`);
  assert.match(caught.message, pattern);
  assert.doesNotMatch(caught.message, /\n/);
  return caught;
}

test("a FIFO as pyproject.toml, as requirements.txt or as a -r include: refused, never waited on", () => {
  const a = project({});
  execFileSync("mkfifo", [join(a, "pyproject.toml")]);
  oneLineError(() => readProject(a), /pyproject\.toml: it is a FIFO/);
  const b = project({ "requirements.txt": "-r extra.txt\ntorch\n" });
  execFileSync("mkfifo", [join(b, "extra.txt")]);
  oneLineError(() => readProject(b), /extra\.txt: it is a FIFO/);
});

test("-r /proc/self/environ and -c /etc/shadow are refused without reading them", () => {
  process.env["GPUPREP_TEST_SECRET"] = "hunter2-token-value";
  for (const include of [
    "-r /proc/self/environ",
    "-c /etc/shadow",
    "-r ../../../../../../proc/self/environ",
  ]) {
    const dir = project({ "requirements.txt": `${include}\n` });
    const error = oneLineError(() => readProject(dir), /lies outside the project/);
    assert.doesNotMatch(`${error.message} ${error.hint}`, /hunter2|root:/);
  }
  // A link inside the project that leads out is the same include.
  const dir = project({ "requirements.txt": "-r env.txt\n" });
  symlinkSync("/proc/self/environ", join(dir, "env.txt"));
  const error = oneLineError(() => readProject(dir), /lies outside the project/);
  assert.doesNotMatch(error.message, /hunter2/);
  // So is a top-level requirements file that is itself such a link.
  const top = project({});
  symlinkSync("/proc/self/environ", join(top, "requirements-secret.txt"));
  assert.doesNotMatch(oneLineError(() => readProject(top), /outside the project/).message, /hunter2/);
});

test("a line that does not parse is quoted as a short sanitized prefix only", () => {
  const secretLine = `not a requirement \u001b]0;pwned\u0007 ${"TOKEN=abcdef ".repeat(40)}`;
  const dir = project({ "requirements.txt": `${secretLine}\n` });
  const error = oneLineError(() => readProject(dir), /not a valid requirement/);
  assert.ok(!error.message.includes("\u001b") && !error.message.includes("\u0007"), "no raw escapes");
  assert.ok(error.message.length < dir.length + 200, error.message);
  const py = project({
    "pyproject.toml": `[project]\nname = "x"\ndependencies = ["torch ${"<".repeat(5000)}"]\n`,
  });
  assert.ok(oneLineError(() => readProject(py), /invalid requirement/).message.length < py.length + 300);
});

test("1 MB lines: the regexes are linear, and manifests refuse lines past 64 KiB", () => {
  const mb = 1024 * 1024;
  const hostile = [
    "https://" + "a-".repeat(mb / 2) + "!", // the wheel-name pattern (was minutes)
    "git+https://" + "#&".repeat(mb / 2), // the egg pattern
    "git+https://" + "#".repeat(mb),
    "a" + " ".repeat(mb) + "!",
    "a==" + "1!=".repeat(mb / 3) + "<",
  ];
  const started = performance.now();
  for (const line of hostile) parseRequirement(line, "test"); // result: null or a requirement, either is fine
  assert.ok(performance.now() - started < 2000, `parseRequirement took ${performance.now() - started} ms`);

  for (const [file, content] of [
    ["requirements.txt", `torch${" ".repeat(mb)}--hash=sha256:x\n`],
    ["requirements.txt", `torch${" #".repeat(mb / 2)}\r\n`],
    ["pyproject.toml", `[project]\n${"a.".repeat(mb / 2)}b = 1\n`],
    ["environment.yml", `name: ${": ".repeat(50_000)}\n`], // 100 KB: under the file cap, over the line cap
  ] as const) {
    const dir = project({ [file]: content });
    const t = performance.now();
    oneLineError(() => readProject(dir), /line of \d+ characters, longer than gpuprep reads/);
    assert.ok(performance.now() - t < 2000);
  }
  // Under the cap a long but honest line still parses (a pip-compile line with many hashes).
  const hashes = Array.from(
    { length: 300 },
    (_, i) => ` \\\n    --hash=sha256:${String(i).padStart(64, "0")}`,
  ).join("");
  const ok = readProject(project({ "requirements.txt": `torch==2.5.1${hashes}\n` }));
  assert.equal(ok.requirementsFiles[0]?.requirements[0]?.specifier, "==2.5.1");
});

test("environment.yml: deep or numerous flow collections are refused before the yaml parser sees them", () => {
  for (const body of ["[".repeat(100), ("[]".repeat(100) + "\n").repeat(30)]) {
    const dir = project({ "environment.yml": `dependencies: ${body}\n` });
    const t = performance.now();
    oneLineError(() => readProject(dir), /\[ and \{/);
    assert.ok(performance.now() - t < 2000);
  }
  const big = project({ "environment.yml": "dependencies:\n" + "  - numpy\n".repeat(40_000) });
  oneLineError(() => readProject(big), /larger than 256 KiB/);
});

test("a -r include of 30,000 characters that does not exist: named short, in one line under 300 characters", () => {
  // Found by bench/fuzz-readers.mjs: the resolved path, cut only at 200 characters, wrapped the terminal.
  const dir = project({ "requirements.txt": `torch==2.5.1\n-r ${"=".repeat(30_000)}\n` });
  const error = oneLineError(
    () => readProject(dir),
    /requirements\.txt: includes =+… \(\d+ characters\), which does not exist/,
  );
  assert.ok(error.message.length <= 300, `message of ${error.message.length} characters`);
});

test("4 MiB of one repeated -r / -c line: each include is checked once, not once per copy", () => {
  // Found by bench/fuzz-readers.mjs (20,000 copies took 1 s); the full 4 MiB took 10 s of CPU.
  const dir = project({
    "requirements.txt": "-r b.txt\n-c c.txt\n".repeat(230_000),
    "b.txt": "numpy\n",
    "c.txt": "numpy<2\n",
  });
  const start = process.cpuUsage();
  const facts = readProject(dir);
  const { user, system } = process.cpuUsage(start);
  assert.ok((user + system) / 1000 < 3000, `readProject took ${(user + system) / 1000} ms of CPU`);
  const top = facts.requirementsFiles.find((f) => f.path.endsWith("requirements.txt"));
  assert.equal(top?.constraintFiles.length, 1);
  assert.deepEqual(
    facts.requirementsFiles.map((f) => f.path.slice(dir.length + 1)),
    ["requirements.txt", "b.txt", "c.txt"],
  );
});

test("a uv.lock whose source is a table (or an array, a number) is read, not an internal error", () => {
  const lock = (source: string) =>
    project({
      "pyproject.toml": '[project]\nname = "x"\nversion = "0"\ndependencies = ["torch"]\n',
      "uv.lock": `version = 1\n[[package]]\nname = "torch"\nversion = "2.0"\nsource = ${source}\n`,
    });
  for (const source of ["{ registry = { a = 1 } }", "{ git = [1, 2] }", "{ path = 3 }", "{ }"]) {
    const facts = readProject(lock(source));
    assert.deepEqual(facts.uvLock?.packages, [{ name: "torch", version: "2.0", source: null }], source);
  }
  const registry = readProject(lock('{ registry = "https://pypi.org/simple" }'));
  assert.equal(registry.uvLock?.packages[0]?.source, "registry+https://pypi.org/simple");
});
