/**
 * Snapshots edited by hand or by an attacker (`doctor --from`, `init --from`): what bench/fuzz-snapshots.mjs
 * found. Every error stays one short line, and no snapshot value reaches the terminal as an escape.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { UserError } from "../../src/errors.js";
import { parseFacts } from "../../src/facts/io.js";
import { loadKnowledgeBase } from "../../src/kb/index.js";
import { diagnose } from "../../src/diagnose/diagnose.js";
import { renderText } from "../../src/report/text.js";
import { makeStyle } from "../../src/report/style.js";
import { targetFromFacts } from "../../src/plan/target.js";
import type { Facts } from "../../src/facts/schema.js";
import { capturePath, derive } from "./captures.js";

// eslint-disable-next-line no-control-regex
const UNPRINTABLE = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/;
const HOSTILE = "\u001b]0;pwned\u0007\u001b[2J\nRUN touch /tmp/x\n";

function capture(): Record<string, unknown> & { host: { nvidia: Record<string, unknown> } } {
  return JSON.parse(readFileSync(capturePath("h100-healthy"), "utf8"));
}

function parseError(doc: unknown): UserError {
  try {
    parseFacts(JSON.stringify(doc), "edited.json");
  } catch (error) {
    assert.ok(error instanceof UserError, `expected a UserError, got ${String(error)}`);
    return error;
  }
  assert.fail("the edited snapshot parsed");
}

function assertOneShortLine(error: UserError): void {
  assert.doesNotMatch(error.message, UNPRINTABLE);
  assert.doesNotMatch(error.hint ?? "", UNPRINTABLE);
  assert.ok(error.message.length <= 300, `message of ${error.message.length} characters`);
}

test("a schemaVersion holding escapes, newlines and 10,000 characters: quoted short and sanitized", () => {
  const doc = capture();
  doc["schemaVersion"] = HOSTILE + "y".repeat(10_000);
  const error = parseError(doc);
  assert.match(error.message, /edited\.json has facts schema version \?\]0;pwned\?\?\[2J\?RUN/);
  assertOneShortLine(error);
});

test("a schema mismatch whose message quotes the bad value: quoted short and sanitized", () => {
  const doc = capture();
  // zod's enum message quotes what it received.
  doc.host.nvidia["status"] = HOSTILE.repeat(50);
  const error = parseError(doc);
  assert.match(error.message, /does not match the facts schema at host\.nvidia\.status: /);
  assertOneShortLine(error);
});

test("doctor's text report shows snapshot values without escapes and with line breaks as '?', never raw", () => {
  const facts = derive("h100-healthy", (f) => {
    f.host.os.prettyName = `Debian${HOSTILE}`;
    f.host.cpuArch = `x86_64${HOSTILE}`;
    f.host.nvidia.driverVersion = `580${HOSTILE}`;
    f.host.nvidia.gpus[0]!.name = `NVIDIA H100${HOSTILE}`;
  });
  const text = renderText(facts, diagnose(facts, loadKnowledgeBase()), makeStyle(false));
  // eslint-disable-next-line no-control-regex
  assert.doesNotMatch(text, /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u2028\u2029]/);
  // Whole escape sequences go (the OSC title's text with them); line breaks show as "?".
  assert.match(text, /^ {2}os {6}Debian\?RUN touch \/tmp\/x\? \(x86_64\?RUN/m);
  assert.match(text, /^ {2}driver {2}580\?RUN touch/m);
  assert.doesNotMatch(text, /pwned/);
  assert.doesNotMatch(text, /^RUN/m);
});

test("a schemaVersion nested 10,000 arrays deep: a one-line error, not a stack overflow", () => {
  const text = readFileSync(capturePath("h100-healthy"), "utf8").replace(
    /"schemaVersion": *1/,
    `"schemaVersion": ${"[".repeat(10_000)}${"]".repeat(10_000)}`,
  );
  // The JSON reader refuses nesting past 256 before anything walks the value.
  assert.throws(
    () => parseFacts(text, "edited.json"),
    (error: unknown) =>
      error instanceof UserError && /nests arrays or objects more than 256 deep/.test(error.message),
  );
  // Under that cap the version check names the value's type, never the value itself.
  const shallower = readFileSync(capturePath("h100-healthy"), "utf8").replace(
    /"schemaVersion": *1/,
    `"schemaVersion": ${"[".repeat(200)}${"]".repeat(200)}`,
  );
  assert.throws(
    () => parseFacts(shallower, "edited.json"),
    (error: unknown) =>
      error instanceof UserError &&
      /has facts schema version \(an array\);/.test(error.message) &&
      !error.message.includes("[["),
  );
});

test("init --from: a GPU name, driver or CPU architecture with escapes is refused in one short line", () => {
  const kb = loadKnowledgeBase();
  const cases: [string, (f: Facts) => void][] = [
    ["GPU name", (f) => (f.host.nvidia.gpus[0]!.name = `NVIDIA H100${HOSTILE}`)],
    ["driver version", (f) => (f.host.nvidia.driverVersion = `580${HOSTILE}`)],
    ["GPU name", (f) => (f.host.nvidia.gpus[0]!.name = "H".repeat(10_000))],
    ["CPU architecture", (f) => (f.host.cpuArch = `x8\u00006_64${"y".repeat(10_000)}`)],
  ];
  for (const [what, patch] of cases) {
    const facts = derive("h100-healthy", patch);
    assert.throws(
      () => targetFromFacts(kb, facts, "edited.json"),
      (error: unknown) => {
        assert.ok(error instanceof UserError, `expected a UserError, got ${String(error)}`);
        assert.match(error.message, new RegExp(what));
        assertOneShortLine(error);
        return true;
      },
    );
  }
});

test("init --from: an nvidia-smi error with escapes is quoted sanitized", () => {
  const facts = derive("h100-healthy", (f) => {
    f.host.nvidia.gpus = [];
    f.host.nvidia.error = HOSTILE.repeat(100);
  });
  assert.throws(
    () => targetFromFacts(loadKnowledgeBase(), facts, "edited.json"),
    (error: unknown) => {
      assert.ok(error instanceof UserError);
      assert.match(error.message, /has no NVIDIA GPU that gpuprep can see/);
      assertOneShortLine(error);
      return true;
    },
  );
});
