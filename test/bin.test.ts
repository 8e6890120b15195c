/** The README's quick start runs `npx gpuprep …` in a clone: npx executes package.json's bin directly. */
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { readFileSync, statSync } from "node:fs";
import { fileURLToPath } from "node:url";

const repoRoot = fileURLToPath(new URL("../../", import.meta.url));

test("every bin in package.json is built executable and runs on its own (shebang, mode)", () => {
  const bins = (
    JSON.parse(readFileSync(`${repoRoot}package.json`, "utf8")) as { bin: Record<string, string> }
  ).bin;
  for (const [name, path] of Object.entries(bins)) {
    const file = `${repoRoot}${path}`;
    assert.ok((statSync(file).mode & 0o111) !== 0, `${name}: ${path} is not executable`);
    const result = spawnSync(file, ["--help"], { encoding: "utf8" });
    assert.equal(result.status, 0, `${name} --help: ${result.stderr}`);
    assert.match(result.stdout, /^gpuprep \d+\.\d+\.\d+/);
  }
});
