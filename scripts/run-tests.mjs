// Runs every compiled *.test.js under dist/ with node's built-in test runner.
// (Node 20's --test takes no globs, so the file list is built here.)
import { mkdtempSync, readdirSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { spawnSync } from "node:child_process";

function findTests(dir, out = []) {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) findTests(path, out);
    else if (name.endsWith(".test.js")) out.push(path);
  }
  return out;
}

const filter = process.argv[2];
const files = findTests("dist").filter((f) => !filter || f.includes(filter));
if (files.length === 0) {
  console.error("no test files found under dist/ (did the build run?)");
  process.exit(1);
}
// Every temp dir the tests (and the Pythons they start) make goes under one directory of this run,
// removed at the end: a test that forgets its own leaves nothing behind in /tmp.
const runTmp = mkdtempSync(join(tmpdir(), "gpuprep-test-run-"));
const result = spawnSync(process.execPath, ["--test", "--test-concurrency=2", ...files], {
  stdio: "inherit",
  env: { ...process.env, TMPDIR: runTmp },
});
if (process.env.GPUPREP_KEEP_TEST_TMP) console.error(`test temp files kept in ${runTmp}`);
else rmSync(runTmp, { recursive: true, force: true });
process.exit(result.status ?? 1);
