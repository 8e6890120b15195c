/**
 * Readable text (issue 29 item 5): over the examples' outputs, no line of init's text report (a
 * dry run with its diffs, with and without -v) and no line of the SETUP.md it writes is longer than
 * 300 characters. A reason that carries a long list (the images passed over) says how many items
 * there are, and -v lists them.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { copyExample, exampleArgs, exampleNames, runInit } from "./helpers.js";
import { separateDetails, wrapProse } from "../../src/util/wrap.js";

const MAX_LINE = 300;

function longLines(text: string): string[] {
  return text.split("\n").filter((line) => line.length > MAX_LINE);
}

test("the five examples: init's text (dry run, with and without -v) and SETUP.md have no line over 300 characters", () => {
  const names = exampleNames();
  assert.equal(names.length, 5, names.join(", "));
  let listed = 0;
  for (const name of names) {
    const dir = copyExample(name);
    const plain = runInit(["--project", dir, "--dry-run", ...exampleArgs(name)]);
    const verbose = runInit(["--project", dir, "--dry-run", "-v", ...exampleArgs(name)]);
    assert.equal(plain.code, 0, plain.stderr);
    assert.equal(verbose.code, 0, verbose.stderr);
    assert.deepEqual(longLines(plain.stdout), [], `${name}: init --dry-run`);
    assert.deepEqual(longLines(verbose.stdout), [], `${name}: init --dry-run -v`);
    assert.equal(runInit(["--project", dir, ...exampleArgs(name)]).code, 0);
    assert.deepEqual(longLines(readFileSync(join(dir, "SETUP.md"), "utf8")), [], `${name}: SETUP.md`);
    // What -v adds are the items a plain run counts.
    const counted = [...plain.stdout.matchAll(/\(… (\d+) more, listed with -v\)/g)].map((m) => Number(m[1]));
    const items = verbose.stdout.split("\n").filter((line) => /^ {8,}- /.test(line)).length;
    assert.ok(items >= counted.reduce((a, b) => a + b, 0), `${name}: -v lists ${items} items`);
    listed += counted.length;
  }
  assert.ok(listed > 0, "no example has a reason with a long list: the -v case is not exercised");
});

test("a reason is wrapped at its clauses; a long parenthesised list becomes its items", () => {
  const reason =
    "newest image that runs here: 25.11; newer ones are passed over (26.09: no arch list is sourced; 26.08: driver 580 runs CUDA 13.4 only under minor-version compatibility (limited features); 26.07: driver 580 runs CUDA 13.3 only under minor-version compatibility); it brings torch 2.10";
  const { text, details } = separateDetails(reason);
  assert.equal(
    text,
    "newest image that runs here: 25.11; newer ones are passed over (…); it brings torch 2.10",
  );
  assert.deepEqual(details, [
    "26.09: no arch list is sourced",
    "26.08: driver 580 runs CUDA 13.4 only under minor-version compatibility (limited features)",
    "26.07: driver 580 runs CUDA 13.3 only under minor-version compatibility",
  ]);
  assert.deepEqual(wrapProse(text, 40), [
    "newest image that runs here: 25.11;",
    "newer ones are passed over (…);",
    "it brings torch 2.10",
  ]);
  const words = wrapProse("a ".repeat(200).trim(), 50);
  assert.ok(words.every((line) => line.length <= 50) && words.join(" ") === "a ".repeat(200).trim());
});
