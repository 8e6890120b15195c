/**
 * issue 16: one stdout writer. Every command writes through src/report/terminal.ts (text
 * sanitized, documents as they are), so a closed pipe, sanitizing and the final newline are
 * handled in one place; a command that writes stdout itself fails here, naming the file and line.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";

const SRC = fileURLToPath(new URL("../../../src/", import.meta.url));
const WRITER = "report/terminal.ts";

function sourceFiles(dir: string, out: string[] = []): string[] {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) sourceFiles(path, out);
    // Tests under src/ write Python and shell scripts as strings; they are not gpuprep's output.
    else if (name.endsWith(".ts") && !name.endsWith(".test.ts")) out.push(path);
  }
  return out;
}

test("only report/terminal.ts writes to stdout (no process.stdout.write or console.log elsewhere)", () => {
  const files = sourceFiles(SRC);
  assert.ok(files.length > 50, `${files.length} files under ${SRC}`);
  const offenders: string[] = [];
  for (const file of files) {
    const name = relative(SRC, file);
    if (name === WRITER) continue;
    readFileSync(file, "utf8")
      .split("\n")
      .forEach((line, i) => {
        if (/process\.stdout\.write\(|console\.(log|info)\(/.test(line))
          offenders.push(`${name}:${i + 1}: ${line.trim()}`);
      });
  }
  assert.deepEqual(offenders, []);
  assert.match(readFileSync(join(SRC, WRITER), "utf8"), /process\.stdout\.write\(/, "the writer itself");
});
