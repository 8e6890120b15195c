#!/usr/bin/env node
/**
 * The standing mutation run over the security-relevant modules (issue 28 item 10): each mutant is
 * one small named edit of the built JavaScript (dist/, what the tests import), the kind of bug a
 * refactor could bring back: a quote not escaped, a link followed, a cap or range check dropped,
 * a frame accepted without this run's nonce. For each, the tests that guard the module run against
 * a copy of dist/ with only that edit; a mutant is killed when they fail, and survives when they
 * pass. A survivor is a missing test (or an equivalent mutant, which says so beside the code and
 * here, and is not counted).
 *
 *   npm run build && node bench/mutation.mjs [--only ID,ID] [--jobs N] [--json FILE]
 *
 * The worktree's dist/ is never edited: the run works in a temporary copy of the repository whose
 * dist/ is a real copy and every other top-level entry a link, so a crash leaves nothing mutated
 * and other test runs in the worktree are not disturbed. Exit 0 when every mutant is killed, 1
 * when one survives, 2 when the unmutated guards fail (the run would prove nothing).
 */
import { spawn } from "node:child_process";
import { clearTimeout, setTimeout } from "node:timers";
import {
  chmodSync,
  cpSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const REPO = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const T = (name) => `dist/test/security/${name}.test.js`;
const PROPS = T("mutants");

/**
 * id: the mutant's name; file: the built module; from/to: the edit, or edits: [[from, to], ...]
 * (each from must occur exactly once);
 * guards: the test files that must fail. equivalent: why no test can tell it apart (not counted).
 */
export const MUTANTS = [
  // ---- quoting (issue 28 item 10: the first two survived 676 tests)
  {
    id: "generate-shellQuote-keeps-quote",
    file: "dist/src/generate/quote.js",
    from: "`'${text.replace(/'/g, `'\\\\''`)}'`",
    to: "`'${text}'`",
    guards: [PROPS, "dist/test/init/hostile-input.test.js"],
  },
  {
    id: "generate-shellQuote-tilde-unquoted",
    file: "dist/src/generate/quote.js",
    from: "&& !tilde)",
    to: ")",
    guards: [PROPS],
  },
  {
    id: "generate-shellDoubleQuoted-keeps-backtick",
    file: "dist/src/generate/quote.js",
    from: 'text.replace(/[$`"\\\\]/g',
    to: 'text.replace(/[$"\\\\]/g',
    guards: [PROPS, "dist/test/init/hostile-input.test.js"],
  },
  {
    id: "dockerfileQuoted-keeps-newlines",
    file: "dist/src/generate/quote.js",
    from: '`"${singleLine(text).replace(',
    to: '`"${text.replace(',
    guards: [PROPS, "dist/test/init/hostile-input.test.js"],
  },
  {
    id: "composeLiteral-keeps-dollar",
    file: "dist/src/generate/quote.js",
    from: 'return text.replace(/\\$/g, "$$$$");',
    to: "return text;",
    guards: [PROPS],
  },
  {
    id: "ssh-shellQuote-keeps-quote",
    file: "dist/src/transports/spawn.js",
    from: "`'${word.replace(/'/g, `'\\\\''`)}'`",
    to: "`'${word}'`",
    guards: [PROPS, "dist/src/transports/transports.test.js"],
  },
  {
    id: "singleLine-keeps-newline",
    file: "dist/src/util/single-line.js",
    from: "/[\\u0000-\\u001f\\u007f-\\u009f\\u2028\\u2029]/g",
    to: "/[\\u0000-\\u0009\\u000b-\\u001f\\u007f-\\u009f\\u2028\\u2029]/g",
    guards: [PROPS, "dist/test/init/hostile-input.test.js"],
  },
  {
    id: "singleLine-keeps-line-separator",
    file: "dist/src/util/single-line.js",
    from: "\\u007f-\\u009f\\u2028\\u2029]/g",
    to: "\\u007f-\\u009f]/g",
    guards: [PROPS],
  },
  // ---- escaping
  {
    id: "escapeHtml-keeps-lt",
    file: "dist/src/report/html.js",
    from: '.replace(/</g, "&lt;")',
    to: "",
    guards: [PROPS],
  },
  {
    id: "escapeHtml-keeps-quote",
    file: "dist/src/report/html.js",
    from: '.replace(/"/g, "&quot;")',
    to: "",
    guards: [PROPS],
  },
  {
    id: "escapeHtml-keeps-ampersand",
    file: "dist/src/report/html.js",
    from: '.replace(/&/g, "&amp;")',
    to: "",
    guards: [PROPS],
  },
  {
    id: "terminal-keeps-bidi-override",
    file: "dist/src/report/terminal.js",
    from: "\\u200f\\u202a-\\u202e\\u2066-\\u2069]/g",
    to: "\\u200f\\u2066-\\u2069]/g",
    guards: [PROPS, T("terminal")],
  },
  {
    id: "terminal-keeps-escape-sequences",
    file: "dist/src/report/terminal.js",
    from: 'return text.replace(ESCAPE, "").replace(CONTROL, "");',
    to: 'return text.replace(CONTROL, "");',
    guards: [PROPS, T("terminal")],
  },
  // ---- paths and writes
  {
    id: "makeProjectDirs-no-recheck",
    file: "dist/src/util/safe-write.js",
    from: "withProjectTree(root, (tree) => tree.directory(relDir, true));",
    to: "mkdirSync(join(root, relDir), { recursive: true });",
    guards: [PROPS, T("write-race")],
  },
  {
    id: "held-directory-follows-links",
    file: "dist/src/util/safe-write.js",
    from: "constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW);",
    to: "constants.O_RDONLY | constants.O_DIRECTORY);",
    guards: [PROPS, T("write-race")],
  },
  {
    id: "project-file-link-accepted",
    file: "dist/src/util/safe-write.js",
    from: "if (stats.isSymbolicLink())",
    to: "if (false)",
    guards: ["dist/test/init/hostile-repo.test.js", "dist/src/generate/write.test.js"],
  },
  // ---- reads
  {
    id: "safe-read-accepts-fifo-and-devices",
    file: "dist/src/util/safe-read.js",
    from: "if (!stats.isFile())",
    to: "if (false)",
    guards: [T("readers")],
  },
  {
    // Both caps: the fstat one is a fast path, the read loop's is the guard (st_size can lie).
    id: "safe-read-no-size-cap",
    file: "dist/src/util/safe-read.js",
    edits: [
      ["if (stats.size > options.maxBytes)", "if (false)"],
      ["if (total > options.maxBytes)", "if (false)"],
    ],
    guards: [T("readers"), "dist/src/util/safe-read.test.js"],
  },
  {
    id: "safe-read-fstat-fast-path",
    file: "dist/src/util/safe-read.js",
    from: "if (stats.size > options.maxBytes)",
    to: "if (false)",
    guards: [T("readers"), "dist/src/util/safe-read.test.js"],
    equivalent:
      "the read loop refuses the same files one chunk (at most 1 MiB) past the cap; the fstat check only saves that read (comment in src/util/safe-read.ts)",
  },
  {
    id: "safe-read-trusts-st-size",
    file: "dist/src/util/safe-read.js",
    from: "if (total > options.maxBytes)",
    to: "if (false)",
    guards: [T("readers"), "dist/src/util/safe-read.test.js"],
  },
  {
    id: "safe-read-not-confined",
    file: "dist/src/util/safe-read.js",
    from: 'if (rel === "" || rel.startsWith("..") || isAbsolute(rel))',
    to: "if (false)",
    guards: [T("readers")],
  },
  {
    id: "safe-read-follows-links",
    file: "dist/src/util/safe-read.js",
    from: "(options.noFollow ? constants.O_NOFOLLOW : 0)",
    to: "0",
    guards: [PROPS, T("readers"), "dist/src/util/safe-read.test.js"],
  },
  // ---- framing
  {
    // The frame of any nonce for this payload is taken: a hook inside the interpreter forges one.
    id: "frame-without-nonce",
    file: "dist/src/transports/payload-frame.js",
    edits: [
      ["if (!line.startsWith(prefix))", "if (!new RegExp(`^${FRAME_TAG} [0-9a-f]+ ${payload} `).test(line))"],
      ["JSON.parse(line.slice(prefix.length))", 'JSON.parse(line.split(" ").slice(3).join(" "))'],
    ],
    guards: [PROPS, T("frame")],
  },
  {
    id: "frame-last-wins",
    file: "dist/src/transports/payload-frame.js",
    from: 'for (const line of stdout.split("\\n")) {',
    to: 'for (const line of stdout.split("\\n").reverse()) {',
    guards: [PROPS, T("frame")],
  },
  // ---- binary scanning
  {
    id: "fatbin-filereader-no-end-check",
    file: "dist/src/fatbin/file-reader.js",
    from: "if (offset + length > size) {",
    to: "if (false) {",
    guards: [PROPS, "dist/src/fatbin/scan.test.js"],
  },
  {
    id: "fatbin-entry-header-bound",
    file: "dist/src/fatbin/fatbin.js",
    from: "if (entryAt + ENTRY_HEADER_MIN > containerEnd) {",
    to: "if (false) {",
    guards: ["dist/src/fatbin/scan.test.js", T("scan-bounds")],
    equivalent:
      "the entry's own bound (entryEnd > containerEnd) refuses the same headers, as 'truncated' instead of 'corrupt': entryEnd >= entryAt + ENTRY_HEADER_MIN once the header size is checked (comment in src/fatbin/fatbin.ts)",
  },
  {
    id: "fatbin-container-past-section",
    file: "dist/src/fatbin/fatbin.js",
    from: "if (!Number.isSafeInteger(containerEnd) || containerEnd > end) {",
    to: "if (!Number.isSafeInteger(containerEnd)) {",
    guards: ["dist/src/fatbin/scan.test.js", T("scan-bounds")],
  },
  {
    id: "fatbin-zero-padding-unbounded",
    file: "dist/src/fatbin/fatbin.js",
    from: "if (at - from >= MAX_ZERO_PADDING)",
    to: "if (false)",
    guards: [T("scan-bounds")],
  },
  {
    id: "ar-long-name-table-uncapped",
    file: "dist/src/fatbin/archive.js",
    from: "if (size > MAX_LONG_NAME_TABLE)",
    to: "if (false)",
    guards: [T("scan-bounds")],
  },
  // ---- process control: job scripts and network clients
  {
    id: "sbatch-values-unchecked",
    file: "dist/src/transports/slurm.js",
    from: "if (value !== undefined && hasControlCharacters(value))",
    to: "if (false)",
    guards: ["dist/test/fleet/slurm-args.test.js"],
  },
  {
    id: "sbatch-job-dir-unchecked",
    file: "dist/src/transports/slurm-batch.js",
    from: "if (hasControlCharacters(options.jobDir))",
    to: "if (false)",
    guards: ["dist/test/fleet/slurm-args.test.js"],
  },
  {
    id: "kube-no-overall-deadline",
    file: "dist/src/transports/kube-api.js",
    from: "const deadline = setTimeout(",
    to: "const deadline = (() => undefined)(",
    guards: [T("kube-deadline")],
  },
  {
    // A registry that serves other bytes than those it files under the tag: init would pin a
    // digest that is not the image's (issue 28 item 8).
    id: "registry-digest-header-unchecked",
    file: "dist/src/remote/registry.js",
    from: 'named !== "" && named !== digest)',
    to: 'named !== "" && false)',
    guards: ["dist/test/init/base-image-digest.test.js"],
  },
];

function parseArgs(argv) {
  const options = { only: null, jobs: 2, json: null };
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === "--only") options.only = new Set(argv[++i].split(","));
    else if (argv[i] === "--jobs") options.jobs = Number(argv[++i]);
    else if (argv[i] === "--json") options.json = argv[++i];
    else throw new Error(`unknown argument ${argv[i]}`);
  }
  return options;
}

/** A copy of the repository: dist/ copied (mutants edit it), everything else linked. */
function sandbox() {
  const root = mkdtempSync(join(tmpdir(), "gpuprep-mutation-"));
  // Readable by others like the worktree: some guards run the CLI as another user (setpriv).
  chmodSync(root, 0o755);
  for (const entry of readdirSync(REPO)) {
    if (entry === "dist" || entry === ".git") continue;
    symlinkSync(join(REPO, entry), join(root, entry));
  }
  cpSync(join(REPO, "dist"), join(root, "dist"), { recursive: true });
  return root;
}

/** node --test over the guards in `root`; resolves to { passed, seconds, tail }. */
/** A mutant that makes a guard hang (a deadline removed) is killed at this limit. */
const GUARD_LIMIT_MS = 240_000;

function runGuards(root, guards, timeoutMs = GUARD_LIMIT_MS) {
  return new Promise((done) => {
    const started = Date.now();
    const child = spawn(process.execPath, ["--test", "--test-concurrency=1", ...guards], {
      cwd: root,
      stdio: ["ignore", "pipe", "pipe"],
      env: { ...process.env, NODE_OPTIONS: "" },
      detached: true,
    });
    let out = "";
    child.stdout.on("data", (d) => (out = (out + d).slice(-20_000)));
    child.stderr.on("data", (d) => (out = (out + d).slice(-20_000)));
    const timer = setTimeout(() => {
      try {
        process.kill(-child.pid, "SIGKILL");
      } catch {
        // gone
      }
    }, timeoutMs);
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      const failed = [...out.matchAll(/^not ok \d+ - (.*)$/gm)].map((m) => m[1]);
      done({
        passed: code === 0,
        timedOut: signal === "SIGKILL",
        seconds: (Date.now() - started) / 1000,
        failed,
      });
    });
  });
}

/** The mutant's edits applied to its file in `root`; returns the function that restores it. */
function applyMutant(root, mutant) {
  const path = join(root, mutant.file);
  const original = readFileSync(path, "utf8");
  let text = original;
  for (const [from, to] of mutant.edits ?? [[mutant.from, mutant.to]]) {
    const count = text.split(from).length - 1;
    if (count !== 1) throw new Error(`${mutant.id}: "${from}" occurs ${count} times in ${mutant.file}`);
    text = text.replace(from, () => to);
  }
  writeFileSync(path, text);
  return () => writeFileSync(path, original);
}

async function main() {
  const options = parseArgs(process.argv.slice(2));
  const mutants = MUTANTS.filter((m) => options.only === null || options.only.has(m.id));
  const root = sandbox();
  const started = Date.now();
  try {
    const guards = [...new Set(mutants.flatMap((m) => m.guards))];
    const baseline = await runGuards(root, guards);
    if (!baseline.passed) {
      console.error(`the unmutated guards fail (${baseline.failed.join("; ")}): fix them first`);
      return 2;
    }
    console.log(`baseline: ${guards.length} guard files pass unmutated (${baseline.seconds.toFixed(1)} s)`);
    const results = [];
    // One mutant at a time per sandbox: they edit the same dist/. --jobs > 1 uses more sandboxes.
    const roots = [root, ...Array.from({ length: Math.max(0, options.jobs - 1) }, sandbox)];
    let next = 0;
    await Promise.all(
      roots.map(async (where) => {
        while (next < mutants.length) {
          const mutant = mutants[next++];
          const restore = applyMutant(where, mutant);
          try {
            const run = await runGuards(where, mutant.guards);
            const status = mutant.equivalent ? "equivalent" : run.passed ? "SURVIVED" : "killed";
            results.push({
              id: mutant.id,
              file: mutant.file,
              status,
              seconds: run.seconds,
              failed: run.failed,
            });
            const by = run.timedOut
              ? ` by: the guards hung past ${GUARD_LIMIT_MS / 1000} s${run.failed.length ? `; ${run.failed[0]}` : ""}`
              : run.failed.length
                ? ` by: ${run.failed.slice(0, 2).join("; ")}`
                : "";
            console.log(
              `${status.padEnd(10)} ${mutant.id} (${run.seconds.toFixed(1)} s)${run.passed ? "" : by}`,
            );
          } finally {
            restore();
          }
        }
      }),
    );
    for (const extra of roots.slice(1)) rmSync(extra, { recursive: true, force: true });
    const counted = results.filter((r) => r.status !== "equivalent");
    const killed = counted.filter((r) => r.status === "killed").length;
    const seconds = (Date.now() - started) / 1000;
    console.log(
      `score: ${killed}/${counted.length} killed (${((100 * killed) / Math.max(1, counted.length)).toFixed(0)}%), ${results.length - counted.length} equivalent, ${seconds.toFixed(0)} s`,
    );
    if (options.json)
      writeFileSync(
        options.json,
        JSON.stringify({ killed, counted: counted.length, seconds, results }, null, 1) + "\n",
      );
    return killed === counted.length ? 0 : 1;
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

process.exitCode = await main();
