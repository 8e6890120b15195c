/** The rule for missing parts: fail on CI with the package to install, skip with it elsewhere. */
import { test } from "node:test";
import assert from "node:assert/strict";
import { aptPart, needs, skipUnless, requireParts, missingMessage, type Part } from "./needs.js";

const absent = aptPart("python3-nothing", "python3-nothing", () => false);
const present = aptPart("python3", "python3", () => true);
const notOnCi: Part = { what: "nvcc", install: "a CUDA toolkit", onCi: false, present: () => false };

function withCi<T>(value: string | undefined, body: () => T): T {
  const saved = process.env["CI"];
  if (value === undefined) delete process.env["CI"];
  else process.env["CI"] = value;
  try {
    return body();
  } finally {
    if (saved === undefined) delete process.env["CI"];
    else process.env["CI"] = saved;
  }
}

function recorder() {
  const skipped: (string | undefined)[] = [];
  return { skipped, t: { skip: (message?: string) => void skipped.push(message) } };
}

test("the message names what is missing and the apt-get line", () => {
  assert.equal(missingMessage(absent), "python3-nothing is not installed: apt-get install python3-nothing");
});

test("on CI a missing part CI installs fails the test, naming the package", () => {
  withCi("true", () => {
    const { skipped, t } = recorder();
    assert.throws(
      () => needs(t, present, absent),
      /python3-nothing is not installed: apt-get install python3-nothing/,
    );
    assert.deepEqual(skipped, []);
    assert.equal(skipUnless(absent), false, "the test runs, and its hook fails it");
    assert.throws(() => requireParts(absent), /apt-get install python3-nothing/);
  });
});

test("outside CI the same part skips the test with the same message", () => {
  for (const ci of [undefined, "", "false", "0"])
    withCi(ci, () => {
      const { skipped, t } = recorder();
      assert.equal(needs(t, present, absent), true);
      assert.deepEqual(skipped, [missingMessage(absent)]);
      assert.equal(skipUnless(absent), missingMessage(absent));
    });
});

test("a part no CI can have skips everywhere; present parts neither skip nor fail", () => {
  for (const ci of ["true", undefined])
    withCi(ci, () => {
      const { skipped, t } = recorder();
      assert.equal(needs(t, notOnCi), true);
      assert.deepEqual(skipped, ["nvcc is not installed: a CUDA toolkit"]);
      assert.equal(needs(t, present), false);
      assert.equal(skipUnless(present), false);
      assert.doesNotThrow(() => requireParts(present));
    });
});
