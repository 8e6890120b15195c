/**
 * Shell completion scripts for bash, zsh and fish, rendered from the commands' own declarations
 * (src/cli/completion.ts builds the model from defineCommand's option tables), so a new flag is
 * completed the day it is declared. What a flag's value completes to comes from the declaration
 * too: a path placeholder (FILE, PATH, DIR, PY) completes files or directories, a fixed set of
 * words (`auto|always|never`, or the option's `choices`) completes those, anything else nothing.
 */

/** What a flag's value completes to. */
export type ValueCompletion =
  | { kind: "none" } // a boolean flag: no value
  | { kind: "free" } // a value nothing can guess (a name, a number)
  | { kind: "file" }
  | { kind: "dir" }
  | { kind: "words"; words: readonly string[] };

export interface CompletionFlag {
  long: string;
  short?: string;
  description: string;
  value: ValueCompletion;
}

export interface CompletionCommand {
  name: string;
  summary: string;
  flags: readonly CompletionFlag[];
  /** Its subcommands, or the words its first positional may be. */
  firstWords: readonly string[];
  /** Whether its positionals are paths (files and directories complete there). */
  positionalPaths: boolean;
}

interface CompletionModel {
  program: string;
  commands: readonly CompletionCommand[];
  /** The flags that may come before the command (-q, -v, --color, --help, --version). */
  leadingFlags: readonly CompletionFlag[];
}

export const COMPLETION_SHELLS = ["bash", "zsh", "fish"] as const;
export type CompletionShell = (typeof COMPLETION_SHELLS)[number];

export function renderCompletion(shell: CompletionShell, model: CompletionModel): string {
  if (shell === "fish") return renderFish(model);
  const bash = renderBash(model);
  if (shell === "bash") return bash;
  // zsh runs the bash function through its own bashcompinit layer, as az and others do: one
  // script, tested by running bash's completion on it.
  return `#compdef ${model.program}
# ${model.program} completion for zsh: eval "$(${model.program} completion zsh)" in ~/.zshrc
autoload -U +X compinit && compinit -u
autoload -U +X bashcompinit && bashcompinit
${bash.replace(/^# .*\n/, "")}`;
}

/** A word safe inside single quotes in sh and fish: only the characters flags and names use. */
function word(text: string): string {
  if (!/^[A-Za-z0-9_.:,+=@/-]+$/.test(text)) throw new Error(`not a completion word: ${text}`);
  return text;
}

function flagWords(flags: readonly CompletionFlag[]): string[] {
  return flags.flatMap((f) => [`--${word(f.long)}`, ...(f.short ? [`-${word(f.short)}`] : [])]);
}

/** `case "$prev"` arms: what the value of each flag that takes one completes to. */
function bashValueArms(flags: readonly CompletionFlag[], indent: string): string[] {
  const arms: string[] = [];
  const groups = new Map<string, string[]>();
  for (const flag of flags) {
    if (flag.value.kind === "none") continue;
    const action =
      flag.value.kind === "file"
        ? `compopt -o filenames 2>/dev/null; mapfile -t COMPREPLY < <(compgen -f -- "$cur"); return`
        : flag.value.kind === "dir"
          ? `compopt -o filenames 2>/dev/null; mapfile -t COMPREPLY < <(compgen -d -- "$cur"); return`
          : flag.value.kind === "words"
            ? `mapfile -t COMPREPLY < <(compgen -W '${flag.value.words.map(word).join(" ")}' -- "$cur"); return`
            : "return";
    const names = [`--${word(flag.long)}`, ...(flag.short ? [`-${word(flag.short)}`] : [])];
    groups.set(action, [...(groups.get(action) ?? []), ...names]);
  }
  for (const [action, names] of groups) arms.push(`${indent}${names.join("|")}) ${action} ;;`);
  return arms;
}

function renderBash(model: CompletionModel): string {
  const p = word(model.program);
  const fn = `_${p.replace(/[^A-Za-z0-9_]/g, "_")}`;
  const leading = model.leadingFlags;
  // Flags before the command that take a value: their value is not the command.
  const leadingWithValue = leading.filter((f) => f.value.kind !== "none").map((f) => `--${word(f.long)}`);
  const commandArms = model.commands.flatMap((c) => {
    const flags = [...c.flags];
    return [
      `    ${word(c.name)})`,
      `      case "$prev" in`,
      ...bashValueArms(flags, "        "),
      `      esac`,
      `      words_for_cmd='${[...c.firstWords.map(word), ...flagWords(flags)].join(" ")}'`,
      ...(c.positionalPaths ? [`      paths_for_cmd=1`] : []),
      `      ;;`,
    ];
  });
  return `# ${p} completion for bash: eval "$(${p} completion bash)" in ~/.bashrc, or save it as
# ~/.local/share/bash-completion/completions/${p}
${fn}() {
  local cur prev cmd words_for_cmd paths_for_cmd i
  cur="\${COMP_WORDS[COMP_CWORD]}"
  prev=""
  [ "$COMP_CWORD" -gt 0 ] && prev="\${COMP_WORDS[COMP_CWORD-1]}"
  cmd=""
  for ((i = 1; i < COMP_CWORD; i++)); do
    case "\${COMP_WORDS[i]}" in
      ${leadingWithValue.join("|") || "--"}) i=$((i + 1)) ;;
      -*) ;;
      *) cmd="\${COMP_WORDS[i]}"; break ;;
    esac
  done
  if [ -z "$cmd" ]; then
    case "$prev" in
${bashValueArms(leading, "      ").join("\n")}
    esac
    mapfile -t COMPREPLY < <(compgen -W '${[...model.commands.map((c) => word(c.name)), ...flagWords(leading)].join(" ")}' -- "$cur")
    return
  fi
  words_for_cmd=""
  paths_for_cmd=""
  case "$cmd" in
${commandArms.join("\n")}
  esac
  mapfile -t COMPREPLY < <(compgen -W "$words_for_cmd" -- "$cur")
  if [ -n "$paths_for_cmd" ] && [ "\${cur#-}" = "$cur" ]; then
    compopt -o filenames 2>/dev/null
    mapfile -t -O "\${#COMPREPLY[@]}" COMPREPLY < <(compgen -f -- "$cur")
  fi
}
complete -F ${fn} ${p}
`;
}

/** A description for fish: the first line, single quotes escaped, at most 80 characters. */
function fishText(text: string): string {
  const first = (text.split("\n")[0] ?? "").trim();
  const short = first.length > 80 ? `${first.slice(0, 79)}…` : first;
  return `'${short.replace(/\\/g, "\\\\").replace(/'/g, "\\'")}'`;
}

function fishFlag(p: string, condition: string, flag: CompletionFlag): string {
  const parts = [`complete -c ${p} -n ${condition} -l ${word(flag.long)}`];
  if (flag.short) parts.push(`-s ${word(flag.short)}`);
  const v = flag.value;
  if (v.kind === "file") parts.push("-r -F");
  else if (v.kind === "dir") parts.push(`-r -f -a '(__fish_complete_directories)'`);
  else if (v.kind === "words") parts.push(`-r -f -a '${v.words.map(word).join(" ")}'`);
  else if (v.kind === "free") parts.push("-r -f");
  parts.push(`-d ${fishText(flag.description)}`);
  return parts.join(" ");
}

function renderFish(model: CompletionModel): string {
  const p = word(model.program);
  const lines = [
    `# ${p} completion for fish: ${p} completion fish > ~/.config/fish/completions/${p}.fish`,
    `function __${p}_command --description 'the ${p} command on the line, if any'`,
    `    set -l tokens (commandline -opc)`,
    `    set -e tokens[1]`,
    `    set -l skip 0`,
    `    for t in $tokens`,
    `        if test $skip -eq 1; set skip 0; continue; end`,
    `        switch $t`,
    ...model.leadingFlags
      .filter((f) => f.value.kind !== "none")
      .map((f) => `            case --${word(f.long)}; set skip 1`),
    `            case '-*'`,
    `            case '*'; echo $t; return 0`,
    `        end`,
    `    end`,
    `    return 1`,
    `end`,
    `complete -c ${p} -f`,
  ];
  const none = `'not __${p}_command'`;
  for (const c of model.commands)
    lines.push(`complete -c ${p} -n ${none} -a ${word(c.name)} -d ${fishText(c.summary)}`);
  for (const flag of model.leadingFlags) lines.push(fishFlag(p, none, flag));
  for (const c of model.commands) {
    const on = `'test (__${p}_command) = ${word(c.name)}'`;
    if (c.firstWords.length > 0)
      lines.push(`complete -c ${p} -n ${on} -a '${c.firstWords.map(word).join(" ")}'`);
    if (c.positionalPaths) lines.push(`complete -c ${p} -n ${on} -F`);
    for (const flag of c.flags) lines.push(fishFlag(p, on, flag));
  }
  return `${lines.join("\n")}\n`;
}
