/**
 * `gpuprep completion bash|zsh|fish`: each script is run by its own shell on real prefixes
 * (bash's COMP_WORDS/COMP_CWORD with the generated function; fish's `complete -C`), and the
 * answers come from the commands' declarations, so a flag added to a command is completed too.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { valueCompletion } from "../../src/cli/completion.js";
import { renderCompletion } from "../../src/report/completion-script.js";
import { FISH, SHELLCHECK, ZSH, needs } from "../support/needs.js";

const MAIN = fileURLToPath(new URL("../../src/cli/main.js", import.meta.url));
const work = mkdtempSync(join(tmpdir(), "gpuprep-completion-"));
mkdirSync(join(work, "project dir"));
writeFileSync(join(work, "facts.json"), "{}");
writeFileSync(join(work, "report.json"), "{}");

function script(shell: string): string {
  const run = spawnSync(process.execPath, [MAIN, "completion", shell], { encoding: "utf8" });
  assert.equal(run.status, 0, run.stderr);
  return run.stdout;
}

/** What bash's completion offers for `words` (the last one being completed), run in `work`. */
function bashComplete(words: string[]): string[] {
  const path = join(work, "gpuprep.bash");
  writeFileSync(path, script("bash"));
  const array = words.map((w) => `'${w.replace(/'/g, "'\\''")}'`).join(" ");
  const run = spawnSync(
    "bash",
    [
      "-c",
      `source "$1"; COMP_WORDS=(${array}); COMP_CWORD=${words.length - 1}; _gpuprep; printf '%s\\n' "\${COMPREPLY[@]}"`,
      "bash",
      path,
    ],
    { encoding: "utf8", cwd: work },
  );
  assert.equal(run.status, 0, run.stderr);
  return run.stdout.split("\n").filter(Boolean).sort();
}

test("bash: commands, a command's flags, fixed values, files and directories, subcommands", () => {
  assert.deepEqual(bashComplete(["gpuprep", "d"]), ["doctor"]);
  assert.deepEqual(bashComplete(["gpuprep", "doctor", "--js"]), ["--json"]);
  // A flag only another command has is not offered.
  assert.deepEqual(bashComplete(["gpuprep", "doctor", "--strat"]), []);
  assert.deepEqual(bashComplete(["gpuprep", "init", "--strategy", ""]), ["auto", "container", "native"]);
  assert.deepEqual(bashComplete(["gpuprep", "memory", "--amp", ""]), ["bf16", "fp16"]);
  // A leading --color takes its value: the command after it is still found.
  assert.deepEqual(bashComplete(["gpuprep", "--color", "never", "valid"]), ["validate"]);
  assert.deepEqual(bashComplete(["gpuprep", "--color", ""]), ["always", "auto", "never"]);
  assert.deepEqual(bashComplete(["gpuprep", "fleet", "co"]), ["collect"]);
  assert.deepEqual(bashComplete(["gpuprep", "kb", "g"]), ["gpu"]);
  assert.deepEqual(bashComplete(["gpuprep", "doctor", "--from", "fa"]), ["facts.json"]);
  assert.deepEqual(bashComplete(["gpuprep", "init", "--project", "pro"]), ["project dir"]);
  assert.deepEqual(bashComplete(["gpuprep", "scan", "rep"]), ["report.json"]);
  // A value nothing can guess (a GPU name) completes to nothing, not to files.
  assert.deepEqual(bashComplete(["gpuprep", "doctor", "--target", "fa"]), []);
  assert.ok(bashComplete(["gpuprep", "completion", ""]).includes("fish"));
});

test("bash: the script passes shellcheck", (t) => {
  if (needs(t, SHELLCHECK)) return;
  const path = join(work, "check.bash");
  writeFileSync(path, script("bash"));
  const run = spawnSync("shellcheck", ["-s", "bash", path], { encoding: "utf8" });
  assert.equal(run.status, 0, run.stdout);
});

test("fish: complete -C answers from the generated script", (t) => {
  if (needs(t, FISH)) return;
  const path = join(work, "gpuprep.fish");
  writeFileSync(path, script("fish"));
  const complete = (line: string): string[] => {
    const run = spawnSync("fish", ["--no-config", "-c", `source $argv[1]; complete -C '${line}'`, path], {
      encoding: "utf8",
      cwd: work,
    });
    assert.equal(run.status, 0, run.stderr);
    return run.stdout
      .split("\n")
      .filter(Boolean)
      .map((l) => l.split("\t")[0]!)
      .sort();
  };
  assert.deepEqual(complete("gpuprep d"), ["doctor"]);
  assert.ok(complete("gpuprep doctor --js").includes("--json"));
  assert.deepEqual(complete("gpuprep doctor --strat"), []);
  assert.deepEqual(complete("gpuprep init --strategy "), ["auto", "container", "native"]);
  assert.ok(complete("gpuprep fleet ").includes("collect"));
});

test("zsh: the script loads through bashcompinit and defines the function", (t) => {
  if (needs(t, ZSH)) return;
  const path = join(work, "gpuprep.zsh");
  writeFileSync(path, script("zsh"));
  const run = spawnSync(
    "zsh",
    ["-f", "-c", `source "$1" && (( $+functions[_gpuprep] )) && echo defined`, "zsh", path],
    {
      encoding: "utf8",
      env: { ...process.env, HOME: work },
    },
  );
  assert.equal(run.status, 0, run.stderr);
  assert.match(run.stdout, /defined/);
});

test("value kinds come from the declaration: paths, fixed sets, free text", () => {
  assert.deepEqual(valueCompletion({ type: "boolean", description: "x" }), { kind: "none" });
  assert.deepEqual(valueCompletion({ type: "string", value: "FILE", description: "x" }), { kind: "file" });
  assert.deepEqual(valueCompletion({ type: "string", value: "DIR", description: "x" }), { kind: "dir" });
  assert.deepEqual(valueCompletion({ type: "string", value: "auto|always|never", description: "x" }), {
    kind: "words",
    words: ["auto", "always", "never"],
  });
  // A placeholder that names forms, not values, is free text.
  assert.deepEqual(valueCompletion({ type: "string", value: "NAME|sm_XY|X.Y", description: "x" }), {
    kind: "free",
  });
  assert.deepEqual(valueCompletion({ type: "string", value: "S", choices: ["a", "b"], description: "x" }), {
    kind: "words",
    words: ["a", "b"],
  });
});

test("a word that could break out of the script's quoting is refused, not written", () => {
  assert.throws(() =>
    renderCompletion("bash", {
      program: "gpuprep",
      commands: [{ name: "x'; rm -rf ~; '", summary: "", flags: [], firstWords: [], positionalPaths: false }],
      leadingFlags: [],
    }),
  );
});

test("completion without a shell, or an unknown one: one line, exit 2", () => {
  for (const args of [["completion"], ["completion", "tcsh"], ["completion", "bash", "zsh"]]) {
    const run = spawnSync(process.execPath, [MAIN, ...args], { encoding: "utf8" });
    assert.equal(run.status, 2, run.stdout);
    assert.match(
      run.stderr,
      /^gpuprep: error: completion: .*\n {2}hint: gpuprep completion bash\|zsh\|fish\n$/,
    );
  }
});
