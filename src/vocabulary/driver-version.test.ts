import { test } from "node:test";
import assert from "node:assert/strict";
import {
  compareDriverVersions,
  formatDriverVersion,
  newestOfBranch,
  parseDriverVersion,
} from "./driver-version.js";

test("a driver is read from a branch, branch.minor or branch.minor.patch, blanks around it trimmed", () => {
  for (const [text, branch, minor, patch, written] of [
    ["580", 580, null, null, "580"],
    ["580.95", 580, 95, null, "580.95"],
    ["580.95.05", 580, 95, 5, "580.95.05"],
    ["  580.95.05 ", 580, 95, 5, "580.95.05"],
    ["535.104.12", 535, 104, 12, "535.104.12"],
  ] as const) {
    const driver = parseDriverVersion(text);
    assert.deepEqual(driver, { branch, minor, patch, text: written }, JSON.stringify(text));
    assert.equal(formatDriverVersion(driver), written, "written as nvidia-smi prints it, the 05 kept");
  }
  for (const text of ["", " ", "abc", "580.", ".95", "580.x", "580.95.05.1", "r580", "580-95", "5 80"])
    assert.equal(parseDriverVersion(text), null, JSON.stringify(text));
});

test("drivers order by branch, minor, patch as numbers (580.95.05 after 580.9.99, 1000 after 999)", () => {
  const sorted = ["580.95.05", "580.9.99", "535.104.12", "1000.1", "580", "580.65.06", "999.99.99"]
    .map((text) => parseDriverVersion(text)!)
    .sort(compareDriverVersions)
    .map(formatDriverVersion);
  assert.deepEqual(sorted, [
    "535.104.12",
    "580",
    "580.9.99",
    "580.65.06",
    "580.95.05",
    "999.99.99",
    "1000.1",
  ]);
  const [a, b] = [parseDriverVersion("580.65")!, parseDriverVersion("580.65.0")!];
  assert.equal(compareDriverVersions(a, b), 0, "a missing part counts as 0");
});

test("a bare branch is judged as its newest patch; a full version as itself", () => {
  const floor = parseDriverVersion("580.65.06")!;
  const branch = parseDriverVersion("580")!;
  assert.ok(compareDriverVersions(branch, floor) < 0, "as written, 580 sorts below 580.65.06");
  assert.ok(compareDriverVersions(newestOfBranch(branch), floor) > 0);
  assert.ok(compareDriverVersions(newestOfBranch(branch), parseDriverVersion("581")!) < 0);
  assert.equal(formatDriverVersion(newestOfBranch(branch)), "580", "still written as the user gave it");
  assert.equal(newestOfBranch(floor), floor);
});
