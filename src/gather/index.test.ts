import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync } from "node:fs";
import { execFileSync } from "node:child_process";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { FactsSchema } from "../facts/schema.js";
import { parseFacts } from "../facts/io.js";
import { UserError } from "../errors.js";
import { chooseTransport, defaultLocalPython, gatherFacts } from "./index.js";
import { needs, PYTHON3_TORCH } from "../../test/support/needs.js";

test("gatherFacts: Debian torch + a project -> a Facts snapshot that survives --save/--from", async (t) => {
  if (needs(t, PYTHON3_TORCH)) return;
  const facts = await gatherFacts({
    python: "/usr/bin/python3",
    projectDir: "test/fixtures/projects/torch-pinned",
    fast: true,
  });
  assert.ok(FactsSchema.safeParse(facts).success);
  assert.deepEqual(facts.target, { kind: "local", ref: null, python: "/usr/bin/python3" });
  assert.equal(facts.project?.dir, resolve("test/fixtures/projects/torch-pinned"));
  assert.match(facts.python.torch?.version ?? "", /^1\.13\./);
  assert.equal(facts.binaries.scanned, false);
  assert.deepEqual(parseFacts(JSON.stringify(facts), "facts.json"), facts);
});

test("gatherFacts: the current directory is the project when it holds a manifest", async () => {
  const cwd = process.cwd();
  const fixture = resolve("test/fixtures/projects/uv-pytorch-extras");
  process.chdir(fixture);
  try {
    const facts = await gatherFacts({ python: "/usr/bin/python3", fast: true });
    assert.equal(facts.project?.dir, fixture);
    assert.equal(facts.project?.uvLock?.packages.length, 4);
    process.chdir(mkdtempSync(join(tmpdir(), "gpuprep-empty-")));
    assert.equal((await gatherFacts({ python: "/usr/bin/python3", fast: true })).project, null);
  } finally {
    process.chdir(cwd);
  }
});

test("gatherFacts: no project when asked for none; a malformed manifest fails before the probe", async () => {
  const facts = await gatherFacts({ python: "/usr/bin/python3", projectDir: null, fast: true });
  assert.equal(facts.project, null);
  await assert.rejects(
    gatherFacts({ python: "/usr/bin/python3", projectDir: "/nonexistent/project", fast: true }),
    UserError,
  );
});

test("target choice: --python default is the active venv, then python3; targets exclude each other", () => {
  const venv = mkdtempSync(join(tmpdir(), "gpuprep-venv-"));
  execFileSync("/usr/bin/python3", ["-m", "venv", "--without-pip", venv]);
  assert.equal(defaultLocalPython({ VIRTUAL_ENV: venv }), join(venv, "bin", "python"));
  assert.equal(defaultLocalPython({ VIRTUAL_ENV: "/nonexistent" }), "python3");
  assert.equal(defaultLocalPython({}), "python3");
  assert.equal(chooseTransport({ container: "web" }).describe(), "python3 in container web");
  assert.equal(
    chooseTransport({ ssh: "gpu1", python: "/opt/venv/bin/python" }).python,
    "/opt/venv/bin/python",
  );
  assert.throws(() => chooseTransport({ container: "a", ssh: "b" }), /exclude each other/);
});
