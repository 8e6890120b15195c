/** extension-leaves-process on the real broken-extensions capture: silent as captured, fires on the fact. */
import { test } from "node:test";
import assert from "node:assert/strict";
import { loadKnowledgeBase } from "../../src/kb/index.js";
import { extensionLeavesProcess } from "../../src/rules/extension-leaves-process.js";
import { diagnose } from "../../src/diagnose/diagnose.js";
import { derive, loadCapture } from "./captures.js";

const kb = loadKnowledgeBase();

test("silent when no import left a process (the capture as made, and with the fact false)", () => {
  assert.deepEqual(extensionLeavesProcess.check(loadCapture("broken-extensions"), kb), []);
  const explicit = derive("broken-extensions", (facts) => {
    for (const ext of facts.python.extensions) ext.leftProcesses = false;
  });
  assert.deepEqual(extensionLeavesProcess.check(explicit, kb), []);
});

test("fires once per extension whose import left a process, as a warning with the module named", () => {
  // The capture with one field changed: xformers' import fact gets leftProcesses: true.
  const facts = derive("broken-extensions", (f) => {
    const xformers = f.python.extensions.find((e) => e.module === "xformers");
    assert.ok(xformers, "the capture has an xformers import");
    xformers.leftProcesses = true;
  });
  const findings = extensionLeavesProcess.check(facts, kb);
  assert.equal(findings.length, 1);
  assert.equal(findings[0]?.severity, "warning");
  assert.match(findings[0]?.message ?? "", /^import xformers started a process/);
  assert.ok(
    diagnose(facts, kb).some((f) => f.ruleId === "extension-leaves-process"),
    "registered",
  );
});
