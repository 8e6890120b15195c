/**
 * PEP 508 requirement strings by example; every expectation is what Python's packaging 23.0
 * answers (Requirement(text) on Debian's /usr/bin/python3).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { isInvalidRequirement, parseRequirement, type Requirement } from "./pep508-requirement.js";

function requirement(text: string): Requirement {
  const r = parseRequirement(text);
  assert.ok(!isInvalidRequirement(r), `${text}: ${isInvalidRequirement(r) ? r.message : ""}`);
  return r;
}

test("name, extras, specifier and marker, and packaging's str()", () => {
  const r = requirement('torch[cuda, Dev]>=2.6,<2.8; python_version >= "3.10" and sys_platform == "linux"');
  assert.equal(r.name, "torch");
  assert.deepEqual(r.extras, ["Dev", "cuda"]);
  assert.equal(r.specifier.toString(), "<2.8,>=2.6");
  assert.equal(r.url, null);
  assert.equal(r.marker?.toString(), 'python_version >= "3.10" and sys_platform == "linux"');
  assert.equal(
    r.toString(),
    'torch[Dev,cuda]<2.8,>=2.6; python_version >= "3.10" and sys_platform == "linux"',
  );
  assert.equal(requirement("torch (>=2.6)").toString(), "torch>=2.6");
});

test("a URL requirement", () => {
  const url =
    "https://download.pytorch.org/whl/cu128/torch-2.8.0%2Bcu128-cp312-cp312-manylinux_2_28_x86_64.whl";
  const r = requirement(`torch @ ${url} ; platform_machine == "x86_64"`);
  assert.equal(r.url, url);
  assert.equal(r.specifier.specifiers.length, 0);
  assert.equal(r.toString(), `torch@ ${url} ; platform_machine == "x86_64"`);
  assert.equal(requirement("pkg @ file:///tmp/x.whl").url, "file:///tmp/x.whl");
});

test("what packaging refuses, with its reason", () => {
  const cases: [string, RegExp][] = [
    ["torch @ ./local", /Invalid URL: \.\/local/],
    ["pkg @ file:/tmp/x.whl", /Invalid URL given/],
    ["torch >=2.6 garbage", /Expected end or semicolon \(after version specifier\)/],
    ["torch>=2.8.*", /Expected end or semicolon/],
    ["-torch", /Expected package name/],
    ["pkg @ http://[::1/x", /Invalid IPv6 URL/],
  ];
  for (const [text, reason] of cases) {
    const r = parseRequirement(text);
    assert.ok(isInvalidRequirement(r), text);
    assert.match(r.message, reason, text);
  }
});
