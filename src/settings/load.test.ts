import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { UserError } from "../errors.js";
import { loadSettings } from "./load.js";

function dirWith(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), "gpuprep-settings-load-"));
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
  return dir;
}

test("[tool.gpuprep] values take their flags' form: a TOML integer driver is the text 580, lists stay lists", () => {
  const dir = dirWith({
    "pyproject.toml":
      '[project]\nname = "x"\n\n[tool.gpuprep]\ntarget = "h100"\ndriver = 580\nbuild-from-source = ["flash-attn"]\njupyter = true\n',
  });
  const settings = loadSettings(dir);
  assert.equal(settings.source, "pyproject.toml [tool.gpuprep]");
  assert.deepEqual(settings.values, {
    target: "h100",
    driver: "580",
    "build-from-source": ["flash-attn"],
    jupyter: true,
  });
});

test("no settings: no pyproject.toml, or one without [tool.gpuprep], or one that is no valid TOML (noted for -v)", () => {
  assert.deepEqual(loadSettings(dirWith({})), { values: {}, source: null, notes: [] });
  assert.equal(loadSettings(dirWith({ "pyproject.toml": "[tool.uv]\npackage = false\n" })).source, null);
  const broken = loadSettings(dirWith({ "pyproject.toml": "[project\n" }));
  assert.equal(broken.source, null);
  assert.match(
    broken.notes[0] ?? "",
    /pyproject\.toml is not read for settings: pyproject\.toml:1: invalid TOML/,
  );
});

test("a value of the wrong kind is refused naming the file and key; the settings of another tool are not looked at", () => {
  const dir = dirWith({ "gpuprep.toml": 'arch = "arm64"\n' });
  assert.throws(
    () => loadSettings(dir),
    (error: unknown) =>
      error instanceof UserError &&
      error.message === 'gpuprep.toml: arch = "arm64" is not valid: one of x86_64, aarch64' &&
      /^arch: /.test(error.hint ?? ""),
  );
  const other = dirWith({ "pyproject.toml": "[tool.gpuprep-extra]\nanything = 1\n[tool.uv]\ntarget = 3\n" });
  assert.deepEqual(loadSettings(other).values, {});
});
