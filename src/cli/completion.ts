/** gpuprep completion bash|zsh|fish: the shell script, made from every command's declaration. */
import { UserError } from "../errors.js";
import {
  COMPLETION_SHELLS,
  renderCompletion,
  type CompletionCommand,
  type CompletionFlag,
  type CompletionShell,
  type ValueCompletion,
} from "../report/completion-script.js";
import { writeText } from "../report/terminal.js";
import { COMMON_OPTIONS } from "./args.js";
import {
  EXIT_OK,
  defineCommand,
  type Command,
  type CommandEntry,
  type OptionSpec,
  type OptionTable,
} from "./command.js";

/** Placeholders whose value is a path: FILE, PATH, PY (an interpreter), DIR (a directory). */
const FILE_PLACEHOLDERS = new Set(["FILE", "PATH", "PY"]);

/** What the value of `option` completes to, from its declaration. */
export function valueCompletion(option: OptionSpec): ValueCompletion {
  if (option.type === "boolean") return { kind: "none" };
  if (option.choices) return { kind: "words", words: option.choices };
  const placeholder = option.value ?? "";
  if (placeholder === "DIR") return { kind: "dir" };
  if (FILE_PLACEHOLDERS.has(placeholder)) return { kind: "file" };
  // `auto|always|never`: a fixed set written as the placeholder (lower-case words only, so
  // NAME|sm_XY|X.Y, which describes forms, is not taken for one).
  if (/^[a-z0-9_]+(\|[a-z0-9_]+)+$/.test(placeholder))
    return { kind: "words", words: placeholder.split("|") };
  return { kind: "free" };
}

function completionFlags(options: OptionTable): CompletionFlag[] {
  return Object.entries(options).map(([long, option]) => ({
    long,
    ...(option.short ? { short: option.short } : {}),
    description: option.description,
    value: valueCompletion(option),
  }));
}

/** Every command's flags and subcommands, this one included. */
async function completionCommands(
  table: Readonly<Record<string, CommandEntry>>,
): Promise<CompletionCommand[]> {
  const commands: CompletionCommand[] = [];
  for (const [name, entry] of Object.entries(table)) {
    const command = await entry.load();
    commands.push({
      name,
      summary: entry.summary,
      flags: completionFlags({ ...command.options, help: HELP_FLAG }),
      firstWords: command.positionalCompletion.words,
      positionalPaths: command.positionalCompletion.paths,
    });
  }
  commands.push({
    name: "help",
    summary: "the help of a command",
    flags: [],
    firstWords: Object.keys(table),
    positionalPaths: false,
  });
  return commands;
}

const HELP_FLAG: OptionSpec = { type: "boolean", short: "h", description: "this help" };
const VERSION_FLAG: OptionSpec = { type: "boolean", short: "V", description: "gpuprep's version" };

/** The completion command for this table of commands (commands.ts passes its own). */
export function completionCommandFor(table: Readonly<Record<string, CommandEntry>>): Command {
  return defineCommand({
    name: "completion",
    title: "shell completion for bash, zsh or fish",
    positionals: "SHELL",
    firstWords: COMPLETION_SHELLS,
    options: {},
    intro:
      "Prints a completion script for SHELL (bash, zsh or fish), made from every command's flags,\nsubcommands and value kinds (paths complete files; fixed sets complete their words).",
    examples: [
      [
        'eval "$(gpuprep completion bash)"',
        "completion in this bash session (add the line to ~/.bashrc to keep it)",
      ],
      ["gpuprep completion fish > ~/.config/fish/completions/gpuprep.fish", "completion for fish"],
      ['eval "$(gpuprep completion zsh)"', "completion in zsh (through zsh's bashcompinit)"],
    ],
    async run({ positionals }) {
      const [shell, extra] = positionals;
      if (
        shell === undefined ||
        !(COMPLETION_SHELLS as readonly string[]).includes(shell) ||
        extra !== undefined
      )
        throw new UserError(
          shell === undefined
            ? "completion: which shell?"
            : `completion: "${positionals.join(" ")}" is not a shell gpuprep completes`,
          `gpuprep completion ${COMPLETION_SHELLS.join("|")}`,
        );
      const script = renderCompletion(shell as CompletionShell, {
        program: "gpuprep",
        commands: await completionCommands(table),
        leadingFlags: completionFlags({ ...COMMON_OPTIONS, help: HELP_FLAG, version: VERSION_FLAG }),
      });
      writeText(script);
      return EXIT_OK;
    },
  });
}
