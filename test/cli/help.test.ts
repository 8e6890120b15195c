/** issue 17: `gpuprep help CMD` is `gpuprep CMD --help`, byte for byte, and every command's help has examples. */
import { test } from "node:test";
import assert from "node:assert/strict";
import { runCli } from "../support/cli.js";

/** The commands the top-level help lists (`  NAME      summary`). */
function listedCommands(): string[] {
  const { code, stdout } = runCli(["--help"]);
  assert.equal(code, 0);
  return [...stdout.matchAll(/^ {2}([a-z]+) {2,}\S/gm)].map((m) => m[1]!);
}

test("the top-level help lists every command", () => {
  const names = listedCommands();
  for (const name of ["doctor", "scan", "init", "validate", "memory", "kb", "fleet"])
    assert.ok(names.includes(name), `${name} missing from: ${names.join(", ")}`);
});

test("help CMD, CMD --help and CMD -h print the same bytes, with an Examples section, for every command", () => {
  for (const name of listedCommands()) {
    const viaHelp = runCli(["help", name]);
    const viaFlag = runCli([name, "--help"]);
    const viaShort = runCli([name, "-h"]);
    for (const result of [viaHelp, viaFlag, viaShort]) {
      assert.equal(result.code, 0, `${name}: ${result.stderr}`);
      assert.equal(result.stderr, "");
    }
    assert.equal(viaHelp.stdout, viaFlag.stdout, `gpuprep help ${name} != gpuprep ${name} --help`);
    assert.equal(viaShort.stdout, viaFlag.stdout, `gpuprep ${name} -h != gpuprep ${name} --help`);
    assert.match(
      viaHelp.stdout,
      new RegExp(`^gpuprep ${name}: `),
      `${name}: its own help, not the top-level one`,
    );
    assert.match(viaHelp.stdout, /\nExamples:\n/, `${name}: no Examples section`);
    assert.match(viaHelp.stdout, /\n {2}-q, --quiet .*\n {2}-v, --verbose /, `${name}: common flags`);
  }
});

test("each command has 2 to 4 examples, and every --flag an example uses is one its help documents", () => {
  for (const name of listedCommands()) {
    const { stdout } = runCli(["help", name]);
    const [body, rest] = stdout.split("\nExamples:\n");
    const section = (rest ?? "").split("\n\n")[0] ?? "";
    const invocations = section.split("\n").filter((line) => line.includes(`gpuprep ${name}`));
    assert.ok(invocations.length >= 2 && invocations.length <= 4, `${name}: ${invocations.length} examples`);
    for (const line of invocations) {
      for (const flag of line.match(/(?<=\s)--[a-z][a-z-]*/g) ?? [])
        assert.ok(
          body!.includes(flag),
          `${name}: example "${line.trim()}" uses ${flag}, which its help does not list`,
        );
    }
  }
});
