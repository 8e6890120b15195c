/**
 * issue 17: the progress line of doctor, validate and scan, in a real pseudo-terminal (util-linux
 * `script`): drawn on stderr, redrawn in place (CR + erase line), erased before the report; never
 * without a terminal, never with -q, never on stdout.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { CLI, requireBinary, runCli, shellWord } from "../support/cli.js";

const REDRAW = "\r\u001b[2K";
const PYTHON = "/usr/bin/python3";

/** The command run with a terminal for stdin, stdout and stderr; returns what the terminal showed. */
function inTerminal(args: string, redirect = ""): string {
  requireBinary("script", "bsdutils");
  const command = `${shellWord(process.execPath)} ${shellWord(CLI)} ${args}${redirect}`;
  const result = spawnSync("script", ["-qec", command, "/dev/null"], {
    encoding: "utf8",
    timeout: 120_000,
    env: { ...process.env, NO_COLOR: "1" },
  });
  assert.ok(result.status === 0 || result.status === 1, `${args}: status ${result.status}\n${result.stdout}`);
  return result.stdout;
}

test("doctor on a terminal: the progress line is drawn, redrawn in place, and erased before the report", () => {
  const shown = inTerminal(`doctor --python ${PYTHON}`);
  assert.ok(shown.includes(`${REDRAW}doctor: probing ${PYTHON} (imports torch) (`), "progress drawn");
  const afterLastErase = shown.slice(shown.lastIndexOf(REDRAW) + REDRAW.length);
  assert.match(afterLastErase, /^gpuprep doctor/, "the report starts on the erased line");
  assert.doesNotMatch(afterLastErase, /doctor: (probing|diagnosing)/, "nothing of the progress line is left");
});

test("validate and scan on a terminal draw their progress line too", () => {
  const validate = inTerminal(`validate --quick --only matmul --python ${PYTHON}`);
  assert.ok(
    validate.includes(`${REDRAW}validate: checks and benchmarks in ${PYTHON} (`),
    validate.slice(0, 300),
  );
  const scan = inTerminal("scan /usr/lib/x86_64-linux-gnu");
  assert.ok(scan.includes(`${REDRAW}scan: `), scan.slice(0, 300));
  assert.match(scan.slice(scan.lastIndexOf(REDRAW) + REDRAW.length), /^gpuprep scan/);
});

test("-q and --quiet: no progress line on a terminal", () => {
  for (const flag of ["-q", "--quiet"]) {
    const shown = inTerminal(`doctor ${flag} --fast --python ${PYTHON}`);
    assert.ok(!shown.includes(REDRAW), `${flag}: ${JSON.stringify(shown.slice(0, 200))}`);
    assert.match(shown, /^gpuprep doctor/);
  }
});

test("the progress line is on stderr only: with stderr away, --json on a terminal is bare JSON", () => {
  const shown = inTerminal(`doctor --json --fast --python ${PYTHON}`, " 2>/dev/null");
  assert.ok(!shown.includes(REDRAW));
  const parsed = JSON.parse(shown) as { schema?: string };
  assert.equal(parsed.schema, "gpuprep.doctor");
});

test("without a terminal: no progress line on stderr", () => {
  const { code, stderr } = runCli(["doctor", "--fast", "--python", PYTHON]);
  assert.ok(code === 0 || code === 1);
  assert.equal(stderr, "");
  const scan = runCli(["scan", "/usr/lib/x86_64-linux-gnu"]);
  assert.equal(scan.stderr, "");
});
