/**
 * Under --json an error is also a JSON document on stderr (schema gpuprep.error), after the same
 * one-line message and hint a person reads; without --json there is no JSON. Every command.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { runCli } from "../support/cli.js";

/** One bad input per command, each refused before any work (exit 2). */
const CASES: { command: string; args: string[] }[] = [
  { command: "doctor", args: ["doctor", "--from", "/nonexistent/facts.json"] },
  { command: "scan", args: ["scan", "/nonexistent/lib.so"] },
  { command: "validate", args: ["validate", "--only", "nosuch"] },
  { command: "memory", args: ["memory", "--model", "/nonexistent/config.json"] },
  { command: "kb", args: ["kb", "gpu", "no-such-gpu-xyz"] },
  { command: "init", args: ["init", "--project", "/nonexistent/project"] },
  { command: "fleet", args: ["fleet", "doctor", "--from", "/nonexistent/dir"] },
];

for (const { command, args } of CASES) {
  test(`${command} --json: a refused input is one line for people and one gpuprep.error document`, () => {
    const plain = runCli(args);
    assert.equal(plain.code, 2, plain.stderr);
    assert.match(plain.stderr, /^gpuprep: error: /);
    assert.doesNotMatch(plain.stderr, /"schema"/, "no JSON without --json");

    const json = runCli([...args, "--json"]);
    assert.equal(json.code, 2, json.stderr);
    assert.equal(json.stdout, "", "nothing on stdout: a reader of stdout sees no half document");
    const lines = json.stderr.trim().split("\n");
    assert.equal(lines[0], plain.stderr.trim().split("\n")[0], "the same message first");
    const doc = JSON.parse(lines.at(-1)!) as Record<string, unknown>;
    assert.equal(doc["schema"], "gpuprep.error");
    assert.equal(doc["schemaVersion"], 1);
    assert.equal(doc["exitCode"], 2);
    const error = doc["error"] as { kind: string; message: string; hint: string | null };
    assert.equal(error.kind, "usage");
    assert.equal(`gpuprep: error: ${error.message}`, lines[0]);
  });
}
