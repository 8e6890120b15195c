/**
 * The properties the security-relevant helpers promise, tested on the helpers themselves (issue 28
 * item 10: seeded bugs in these survived every test, which checked golden files or whole commands).
 * bench/mutation.mjs seeds each bug again and expects a test here, or one it names, to fail.
 *   quoting: a quoted word is the same word to sh, with any quote, dollar, backtick or line break
 *   in it; a Dockerfile value stays on one line; a Compose value never interpolates
 *   escaping: HTML text carries no markup character; the terminal sees no escape or bidi control
 *   paths: a directory made inside the project never goes through a link, even one planted
 *   reads: a range past the end of a file is refused before anything is allocated or read
 *   framing: only this run's nonce and payload count, and the first valid frame wins
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { composeLiteral, dockerfileQuoted, shellQuote } from "../../src/generate/quote.js";
import { shellQuote as remoteShellQuote } from "../../src/transports/spawn.js";
import { escapeHtml } from "../../src/report/html.js";
import { sanitizeForTerminal } from "../../src/report/terminal.js";
import { singleLine } from "../../src/util/single-line.js";
import { makeProjectDirs } from "../../src/util/safe-write.js";
import { FileReader } from "../../src/fatbin/file-reader.js";
import { ScanError } from "../../src/fatbin/errors.js";
import { FRAME_TAG, readFrame } from "../../src/transports/payload-frame.js";
import { UserError } from "../../src/errors.js";
import { readTextFile } from "../../src/util/safe-read.js";

/** Words that break naive quoting: quotes, expansions, separators, line breaks, globs. */
const HOSTILE_WORDS = [
  "it's",
  "'",
  "''; touch /tmp/x; '",
  "a'b\"c",
  "$HOME",
  "$(id)",
  "`id`",
  'a"b',
  "a\\b",
  "x --volume /:/host",
  "line1\nline2",
  "*",
  "~root",
  "~",
  "a=~root",
  "PATH=x:~root",
  "a;b|c&d",
  "",
  "-",
  "${IFS}",
  "!!",
];

/**
 * What bash (the generated scripts' shell; it expands more than sh: a=~root) makes of `quoted`:
 * printf prints each argument between markers.
 */
function asShellSees(quoted: string): string[] {
  const run = spawnSync("/bin/bash", ["-c", `printf '<%s>' ${quoted}`], { encoding: "utf8" });
  assert.equal(run.status, 0, run.stderr);
  return [...run.stdout.matchAll(/<([^>]*)>/gs)].map((m) => m[1]!);
}

test("generate/quote shellQuote: every hostile word is one word to sh, unchanged", () => {
  for (const word of HOSTILE_WORDS) {
    if (word.includes(">")) continue; // the markers
    assert.deepEqual(asShellSees(shellQuote(word)), [word], `shellQuote(${JSON.stringify(word)})`);
  }
});

test("transports shellQuote (ssh's remote command): every hostile word is one word to sh, unchanged", () => {
  for (const word of HOSTILE_WORDS) {
    assert.deepEqual(asShellSees(remoteShellQuote(word)), [word], `shellQuote(${JSON.stringify(word)})`);
  }
});

test("dockerfileQuoted: one line, one double-quoted value that unescapes to the single-line text", () => {
  for (const text of [...HOSTILE_WORDS, "a\r\nRUN id", "a\u2028b", "a\u0085b", "tab\there"]) {
    const quoted = dockerfileQuoted(text);
    assert.doesNotMatch(
      quoted,
      /[\n\r\u2028\u2029\u0085]/,
      `a line break survives: ${JSON.stringify(quoted)}`,
    );
    assert.match(quoted, /^"(?:[^"\\$]|\\[\\"$])*"$/s, `not one quoted value: ${quoted}`);
    const unescaped = quoted.slice(1, -1).replace(/\\([\\"$])/g, "$1");
    assert.equal(unescaped, singleLine(text));
  }
});

test("composeLiteral: Compose sees every $ as a literal dollar", () => {
  for (const text of ["$HOME", "${HOME}", "$$", "a$b$", "no dollar"]) {
    const literal = composeLiteral(text);
    // Compose reads $$ as $ and any other $ as interpolation: none may be left alone.
    assert.doesNotMatch(literal.replace(/\$\$/g, ""), /\$/, literal);
    assert.equal(literal.replace(/\$\$/g, "$"), text);
  }
});

test("singleLine: every C0, DEL, C1 and Unicode line separator becomes a space", () => {
  const breaking = [
    ...Array.from({ length: 0x20 }, (_, i) => i),
    ...Array.from({ length: 0x21 }, (_, i) => 0x7f + i),
    0x2028,
    0x2029,
  ].map((c) => String.fromCharCode(c));
  for (const c of breaking) assert.equal(singleLine(`a${c}b`), "a b", `U+${c.charCodeAt(0).toString(16)}`);
  assert.equal(singleLine("plain é text"), "plain é text");
});

test("escapeHtml: no markup character survives, and the text comes back whole", () => {
  const text = `<script>alert("x")</script> & 'quoted' &amp;`;
  const escaped = escapeHtml(text);
  assert.doesNotMatch(escaped, /[<>"']/, escaped);
  assert.doesNotMatch(escaped, /&(?!(amp|lt|gt|quot|#39);)/, `a bare &: ${escaped}`);
  const back = escaped
    .replace(/&lt;/g, "<")
    .replace(/&gt;/g, ">")
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&amp;/g, "&");
  assert.equal(back, text);
});

test("sanitizeForTerminal: escapes, C0/C1 controls and every bidi control are gone; newlines and tabs stay", () => {
  const controls = [
    "\u001b[31m",
    "\u001b]0;title\u0007",
    "\u001b[2J",
    "\r",
    "\u0008",
    "\u009b",
    "\u061c",
    "\u200e",
    "\u200f",
    ...Array.from({ length: 5 }, (_, i) => String.fromCharCode(0x202a + i)),
    ...Array.from({ length: 4 }, (_, i) => String.fromCharCode(0x2066 + i)),
  ];
  for (const c of controls) {
    const out = sanitizeForTerminal(`a${c}b`);
    assert.equal(out, "ab", `${JSON.stringify(c)} -> ${JSON.stringify(out)}`);
  }
  assert.equal(sanitizeForTerminal("a\tb\nc"), "a\tb\nc");
});

test("makeProjectDirs: a link anywhere on the way is refused, nothing is made outside the project", () => {
  const base = mkdtempSync(join(tmpdir(), "gpuprep-mutants-dirs-"));
  const root = join(base, "project");
  const outside = join(base, "outside");
  mkdirSync(root);
  mkdirSync(outside);
  symlinkSync(outside, join(root, "scripts"));
  assert.throws(() => makeProjectDirs(root, "scripts/sub"), UserError);
  assert.ok(!existsSync(join(outside, "sub")), "a directory was made through the link");
  mkdirSync(join(root, "a"));
  symlinkSync(outside, join(root, "a", "b"));
  assert.throws(() => makeProjectDirs(root, "a/b/c"), /symbolic link/);
  assert.ok(!existsSync(join(outside, "c")));
  // The silent case: plain directories are made.
  makeProjectDirs(root, "x/y/z");
  assert.ok(existsSync(join(root, "x", "y", "z")));
});

test("FileReader: a range past the end is 'truncated' before any read or allocation", async () => {
  const dir = mkdtempSync(join(tmpdir(), "gpuprep-mutants-reader-"));
  const path = join(dir, "small.bin");
  writeFileSync(path, Buffer.alloc(64, 1));
  const reader = await FileReader.open(path);
  try {
    assert.equal((await reader.read(0, 64, "all")).length, 64);
    for (const [offset, length] of [
      [60, 8],
      [64, 1],
      [1000, 4],
      // A hostile header's size: allocating it would fail (or take the memory) before any read.
      [0, 2 ** 40],
      [2 ** 52, 8],
    ] as const) {
      await assert.rejects(
        reader.read(offset, length, "a claimed range"),
        (error: unknown) =>
          error instanceof ScanError &&
          error.code === "truncated" &&
          /past the end of the file/.test(error.message),
        `offset ${offset} length ${length}`,
      );
    }
  } finally {
    await reader.close();
  }
});

test("readFrame: only this run's nonce and payload count, and the first valid frame wins", () => {
  const nonce = "0123456789abcdef0123";
  const other = "fedcba9876543210fedc";
  const frame = (n: string, payload: string, json: string) => `${FRAME_TAG} ${n} ${payload} ${json}`;
  const stdout = [
    frame(other, "probe", '{"host":"forged, another nonce"}'),
    `${FRAME_TAG} probe {"host":"forged, no nonce"}`,
    frame(nonce, "validate", '{"host":"another payload"}'),
    frame(nonce, "probe", "[1,2]"),
    frame(nonce, "probe", "not json"),
    frame(nonce, "probe", '{"host":"real"}'),
    frame(nonce, "probe", '{"host":"printed later by an atexit hook"}'),
  ].join("\n");
  assert.deepEqual(readFrame(stdout, nonce, "probe"), { host: "real" });
  assert.equal(readFrame(stdout.split("\n").slice(0, 5).join("\n"), nonce, "probe"), null);
  assert.equal(readFrame(stdout, "", "probe"), null, "an empty nonce matches nothing");
});

test("safe-read noFollow: a link at the path is refused, not read (the swap after a check)", () => {
  const dir = mkdtempSync(join(tmpdir(), "gpuprep-mutants-nofollow-"));
  writeFileSync(join(dir, "secret"), "outside the project");
  symlinkSync(join(dir, "secret"), join(dir, "manifest.json"));
  const options = { maxBytes: 1024, hint: "h" };
  assert.throws(
    () => readTextFile(join(dir, "manifest.json"), { ...options, noFollow: true }),
    /symbolic link/,
  );
  // The silent case: without noFollow a link the user chose is followed.
  assert.equal(readTextFile(join(dir, "manifest.json"), options), "outside the project");
});
