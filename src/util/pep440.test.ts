/**
 * PEP 440 by example. Every expectation here is what Python's packaging 23.0 answers (Debian's
 * /usr/bin/python3; e.g. `SpecifierSet("<2.8").contains("2.8.0a0+5228986c39.nv25.08",
 * prereleases=True)` is False); src/util/pep440-differential.test.ts checks a generated corpus the
 * same way.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import {
  acceptsInstalled,
  isInvalidSpecifier,
  parsePep440Version,
  parseSpecifierSet,
  parseVersion,
  satisfies,
  selectFromIndex,
  type Pep440Version,
  type SpecifierSet,
} from "./pep440.js";

const NGC_TORCH = "2.8.0a0+5228986c39.nv25.08";

function version(text: string): Pep440Version {
  const v = parsePep440Version(text);
  assert.ok(v, `${text} parses`);
  return v;
}

function set(text: string): SpecifierSet {
  const s = parseSpecifierSet(text);
  assert.ok(!isInvalidSpecifier(s), `${text} parses`);
  return s;
}

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

test("an exclusive <V refuses V's own pre-releases: an NGC torch 2.8.0a0 is not <2.8", () => {
  assert.equal(satisfies(NGC_TORCH, "<2.8"), false);
  assert.equal(satisfies(NGC_TORCH, ">=2.6,<2.8"), false);
  assert.equal(satisfies(NGC_TORCH, "<=2.8"), true);
  assert.equal(satisfies(NGC_TORCH, "<2.8.0a1"), true, "unless the bound is itself a pre-release");
  assert.equal(satisfies(NGC_TORCH, "<2.9"), true);
  assert.equal(satisfies(NGC_TORCH, "==2.8.*"), true);
  assert.equal(satisfies(NGC_TORCH, "~=2.7"), true);
  assert.equal(satisfies(NGC_TORCH, "==2.8.0a0"), true);
});

test("an exclusive >V refuses V's post-releases and local versions", () => {
  assert.equal(satisfies("2.8.0.post1", ">2.8"), false);
  assert.equal(satisfies("2.8.0+cu128", ">2.8"), false);
  assert.equal(satisfies("2.8.1+cu128", ">2.8"), true);
  assert.equal(satisfies("2.8.0.post2", ">2.8.post1"), true);
  assert.equal(satisfies(NGC_TORCH, ">2.8.0a0"), false);
});

test("the installed question admits pre-releases; the index question does not unless named", () => {
  const range = set(">=2.7");
  assert.equal(acceptsInstalled(range, version("2.8.0a0+5228986c39.nv25.08")), true);
  assert.equal(range.contains(version("2.8.0a0"), null), false);
  assert.equal(range.contains(version("2.8.0a0"), false), false);
  const offered = ["2.7.0", "2.8.0a0", "2.7.1"].map(version);
  assert.deepEqual(selectFromIndex(range, offered).map(String), ["2.7.0", "2.7.1"]);
  assert.deepEqual(selectFromIndex(range, offered, true).map(String), ["2.7.0", "2.8.0a0", "2.7.1"]);
  assert.deepEqual(selectFromIndex(set(">=2.8.0a0"), offered).map(String), ["2.8.0a0"]);
  // packaging 23.0: a non-empty set admits no pre-release it does not name, even when nothing else matches.
  assert.deepEqual(selectFromIndex(set(">=1.2.3"), [version("1.5a1")]), []);
  // The empty set admits them only when nothing final is offered.
  assert.deepEqual(selectFromIndex(set(""), [version("1.5a1")]).map(String), ["1.5a1"]);
  assert.deepEqual(selectFromIndex(set(""), ["1.3", "1.5a1"].map(version)).map(String), ["1.3"]);
});

test("~= takes its prefix from the text as written (packaging's _version_split)", () => {
  assert.equal(satisfies("1.0.1", "~=1.0.0.post1"), true);
  assert.equal(
    satisfies("1.0.1", "~=1.0.0.r1"),
    false,
    '"r1" does not start like a suffix, so the prefix is 1.0.0',
  );
  assert.equal(satisfies("1.4.9", "~=1.4.5a4"), true);
});

test("==V.* compares the public version padded to V's length", () => {
  assert.equal(satisfies("2.0.0a0", "==2.0.*"), true);
  assert.equal(satisfies("2.8.0a0+x", "==2.8.0.*"), true);
  assert.equal(satisfies("1!1.0.0", "==1!1.0.*"), false, "packaging's padding does not see past the epoch");
  assert.equal(satisfies("2.10", "!=2.1.*"), true);
});

test("normalised form, and the parts packaging reports", () => {
  const v = version("  V1!0007.2.0-ALPHA_3.REV.4-dev-05+Ubuntu-1_007 ");
  assert.equal(v.toString(), "1!7.2.0a3.post4.dev5+ubuntu.1.7");
  assert.equal(v.public, "1!7.2.0a3.post4.dev5");
  assert.equal(v.baseVersion, "1!7.2.0");
  assert.deepEqual(
    [v.epoch, v.release, v.pre, v.post, v.dev, v.local],
    [1, [7, 2, 0], ["a", 3], 4, 5, "ubuntu.1.7"],
  );
  assert.deepEqual([v.isPrerelease, v.isPostrelease, v.isDevrelease], [true, true, true]);
  assert.equal(version(NGC_TORCH).toString(), "2.8.0a0+5228986c39.nv25.8");
  assert.equal(version("1.0-1").toString(), "1.0.post1");
  assert.equal(version("1.0c1").toString(), "1.0rc1");
  assert.equal(version("1.0+\u212a").toString(), "1.0+k", "Python's IGNORECASE folds the Kelvin sign to k");
});

test("ordering: dev < pre < final < local < post, locals by part", () => {
  const order = [
    "1.0.dev1",
    "1.0a1.dev1",
    "1.0a1",
    "1.0rc1",
    "1.0",
    "1.0+abc",
    "1.0+abc.2",
    "1.0+1",
    "1.0.post1.dev1",
    "1.0.post1",
  ];
  const shuffled = [...order].reverse().map(version);
  assert.deepEqual(shuffled.sort((a, b) => a.compare(b)).map(String), order);
  assert.ok(version("1.0").equals(version("1.0.0")));
  assert.ok(
    version("18446744073709551617").compare(version("18446744073709551616")) > 0,
    "no precision lost past 2^53",
  );
});

test("not PEP 440: null, and an invalid specifier says which part", () => {
  for (const text of ["", "1..0", "1.0+", "latest", "2.5.1=py312_cu124", "1.0\ufeff", "\u0663.0"])
    assert.equal(parsePep440Version(text), null, JSON.stringify(text));
  assert.equal(parseVersion("2.5.1")?.toString(), "2.5.1");
  const invalid = parseSpecifierSet(">=2.6, >=2.8.*");
  assert.ok(isInvalidSpecifier(invalid));
  assert.equal(invalid.text, ">=2.8.*");
  assert.equal(satisfies("not-a-version", ">=1"), null);
  assert.equal(satisfies("2.5.1", "~=2"), null);
});

test("=== compares the normalised version's text", () => {
  assert.equal(satisfies("2.5.1", "===2.5.1"), true);
  assert.equal(satisfies("2.5.1", "===2.5.1.0"), false);
  assert.equal(satisfies("V2.5.1", "===2.5.1"), true);
});

test("a set prints as packaging prints it: sorted, equal specifiers once", () => {
  assert.equal(set(" <3 , >=2.3,>=2.3.0").toString(), "<3,>=2.3");
  assert.equal(set("===1.0,===1.0.0").toString(), "===1.0");
});
