/**
 * issue 16: a flag cannot be parsed without being in its command's help, nor be in the help
 * without being parsed. Read from the outside: the help text as printed, and parseArgs itself
 * given the command's option table.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { parseArgs } from "node:util";
import { COMMANDS } from "../../src/cli/commands.js";
import type { Command } from "../../src/cli/command.js";

/** `  -p, --partition P   ...` or `  --fast   ...`: a flag line of the help, with its short alias. */
const FLAG_LINE = /^ {2}(?:-([A-Za-z]), )?--([a-z][a-z0-9-]*)/;

function helpFlags(help: string): Map<string, string | undefined> {
  const flags = new Map<string, string | undefined>();
  for (const line of help.split("\n")) {
    const match = FLAG_LINE.exec(line);
    if (match) flags.set(match[2]!, match[1]);
  }
  return flags;
}

/** The --flags the usage lines name (`gpuprep kb resolve --gpu NAME --driver VER`). */
function usageFlags(help: string): string[] {
  const start = help.indexOf("usage:");
  const usage = help.slice(start, help.indexOf("\n\n", start));
  return [...usage.matchAll(/(?<=[\s[(])--([a-z][a-z0-9-]*)/g)].map((m) => m[1]!);
}

/** Every way the help and the parser disagree, in words; empty when they agree. */
function mismatches(command: Pick<Command, "name" | "help" | "parseOptions">): string[] {
  const problems: string[] = [];
  const options = command.parseOptions ?? {};
  const documented = helpFlags(command.help);
  for (const [name, option] of Object.entries(options)) {
    if (!documented.has(name)) problems.push(`${command.name}: --${name} is parsed but not in its help`);
    else if (documented.get(name) !== option.short)
      problems.push(`${command.name}: --${name}'s short alias differs between help and parser`);
  }
  for (const name of [...documented.keys(), ...usageFlags(command.help)]) {
    const option = options[name];
    if (!option) {
      problems.push(`${command.name}: its help shows --${name}, which it does not parse`);
      continue;
    }
    // parseArgs itself, strict, takes the flag (with a value where it wants one).
    const args = option.type === "string" ? [`--${name}`, "x"] : [`--${name}`];
    try {
      parseArgs({ args, options, strict: true, allowPositionals: true });
    } catch (error) {
      problems.push(`${command.name}: parseArgs refuses --${name}: ${(error as Error).message}`);
    }
  }
  return problems;
}

test("every command: each parsed option is in its help, and each flag its help shows is parsed", async () => {
  const names = Object.keys(COMMANDS);
  assert.ok(names.length >= 7, names.join(", "));
  for (const name of names) {
    const command = await COMMANDS[name]!.load();
    const documented = helpFlags(command.help);
    // The common flags and the command's own: a help with no flags at all would pass vacuously.
    assert.ok(documented.has("quiet") && documented.size > 3, `${name}: ${[...documented.keys()].join(" ")}`);
    assert.deepEqual(mismatches(command), []);
  }
});

test("the check sees a flag missing from help, one only in help, and a wrong short alias", () => {
  const help = [
    "gpuprep demo: x",
    "",
    "usage: gpuprep demo --only-in-usage [flags]",
    "",
    "  --json        JSON",
    "  --ghost FILE  not parsed",
    "  -x, --nodes N  nodes",
  ].join("\n");
  const problems = mismatches({
    name: "demo",
    help,
    parseOptions: {
      json: { type: "boolean" },
      hidden: { type: "string" },
      nodes: { type: "string", short: "N" },
    },
  });
  assert.deepEqual(problems.sort(), [
    "demo: --hidden is parsed but not in its help",
    "demo: --nodes's short alias differs between help and parser",
    "demo: its help shows --ghost, which it does not parse",
    "demo: its help shows --only-in-usage, which it does not parse",
  ]);
});
