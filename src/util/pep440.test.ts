import { test } from "node:test";
import assert from "node:assert/strict";
import { satisfies } from "./pep440.js";

test("local tags are ignored unless the specifier names one", () => {
  assert.equal(satisfies("2.5.1+cu124", "==2.5.1"), true);
  assert.equal(satisfies("2.5.1+cu124", "==2.5.1+cu121"), false);
  assert.equal(satisfies("2.11.0+cu130", "==2.5.1"), false);
});

test("ranges, wildcards and compatible release", () => {
  assert.equal(satisfies("2.11.0", ">=2.3,<3"), true);
  assert.equal(satisfies("1.13.1", ">=2.3,<3"), false);
  assert.equal(satisfies("2.5.3", "==2.5.*"), true);
  assert.equal(satisfies("2.6.0", "~=2.5.1"), false);
  assert.equal(satisfies("2.5.9", "~=2.5.1"), true);
  assert.equal(satisfies("2.6.0", ""), true);
});

test("pre-releases order below their final release (NGC torch 2.6.0a0+ecf3bae40a)", () => {
  assert.equal(satisfies("2.6.0a0+ecf3bae40a", ">=2.6"), false);
  assert.equal(satisfies("2.6.0a0+ecf3bae40a", ">=2.5"), true);
  assert.equal(satisfies("2.6.0", ">2.6.0rc1"), true);
});

test("unreadable specifiers give null", () => {
  assert.equal(satisfies("2.5.1", "===2.5.1"), null);
  assert.equal(satisfies("not-a-version", ">=1"), null);
});
