/**
 * The one shape of a command: its options (each with its help), positionals, examples and run,
 * declared once with defineCommand (its one-line summary is in commands.ts, beside its loader). The parseArgs configuration and the help text are both
 * made from that declaration, so they cannot disagree.
 */
import { resolve } from "node:path";
import type { ParseArgsConfig } from "node:util";
import { UserError } from "../errors.js";
import { renderCommandHelp, type HelpOption, type HelpSpec } from "../report/help-text.js";
import {
  COMMON_OPTIONS,
  parseArgsOptions,
  parseCommandArgs,
  type CommandArgsOptions,
  type ParsedArgs,
} from "./args.js";
import { applySettings, takeBareFlags, withSettingsOrigin, type SettingUse } from "./settings-apply.js";

/** One flag: what parseArgs needs (type, short, multiple, default) and what help shows. */
export interface OptionSpec extends HelpOption {
  multiple?: boolean;
  default?: string | boolean | string[] | boolean[];
  /** The project setting ([tool.gpuprep] in pyproject.toml, or gpuprep.toml) this flag defaults to. */
  setting?: SettingUse;
  /** The values a string flag accepts, where they are a fixed set (shell completion offers them). */
  choices?: readonly string[];
}

export type OptionTable = Readonly<Record<string, OptionSpec>>;

/** The parseArgs call defineCommand makes, as a type: the values' types follow from the option table. */
type ParseConfigOf<O extends OptionTable> = {
  args: string[];
  options: O;
  allowPositionals: true;
  tokens: true;
};

/** The parsed command line a command's run receives: values typed from its option table. */
export type Parsed<O extends OptionTable> = ParsedArgs<ParseConfigOf<O>>;
export type ValuesOf<O extends OptionTable> = Parsed<O>["values"];

interface CommandSpec<O extends OptionTable> extends Omit<HelpSpec, "options" | "usage"> {
  options: O;
  /**
   * The positionals, as usage names them (FILE|DIR..., TOPIC [NAME]). Absent: the command takes
   * none, and one given is refused with `unexpectedArgumentHint`.
   */
  positionals?: string;
  unexpectedArgumentHint?: string;
  /** Usage lines when `gpuprep NAME [flags] POSITIONALS` does not say it (several forms). */
  usage?: HelpSpec["usage"];
  /** Subcommands (the first positional): parse errors name `NAME SUB`. */
  subcommands?: readonly string[];
  /** The words the first positional may be, where they are a set but not subcommands (kb's topics). */
  firstWords?: readonly string[];
  /** Output paths checked before anything runs. */
  outputs?: CommandArgsOptions["outputs"];
  outputDirs?: CommandArgsOptions["outputDirs"];
  /** The flag naming the project directory, where the settings are read (default: the current directory). */
  projectFlag?: string;
  run(parsed: Parsed<O> & SettingsOrigins): Promise<number>;
}

/** Which flags took their value from the project's settings, and from where ("pyproject.toml [tool.gpuprep]'s target"). */
interface SettingsOrigins {
  fromSettings: ReadonlyMap<string, string>;
}

/** What main and the tests see of a command. */
export interface Command {
  name: string;
  /** The whole of `gpuprep help NAME`. */
  help: string;
  /** 2 to 4 real invocations, each with what it does; help prints them under "Examples:". */
  examples: readonly (readonly [invocation: string, what: string])[];
  /** The options parseArgs is configured with, the common ones included. */
  parseOptions: ParseArgsConfig["options"];
  /** The declared options, the common ones included (what shell completion offers). */
  options: OptionTable;
  /** Its subcommands (the first positional), if any. */
  subcommands: readonly string[];
  /** What shell completion offers for a positional: its subcommands or first words, and paths where it takes them. */
  positionalCompletion: { words: readonly string[]; paths: boolean };
  /** 0: clean / passed; 1: findings of error severity / checks failed; 2: the tool could not run. */
  run(argv: string[]): Promise<number>;
}

/** A command in the table of commands: its one-line summary, and its module loaded when it runs. */
export interface CommandEntry {
  summary: string;
  load(): Promise<Command>;
}

export const EXIT_OK = 0;
export const EXIT_FINDINGS = 1;
export const EXIT_TOOL_ERROR = 2;

export function defineCommand<const O extends OptionTable>(spec: CommandSpec<O>): Command {
  const usage = spec.usage ?? [[`[flags]${spec.positionals ? ` ${spec.positionals}` : ""}`] as const];
  const help = renderCommandHelp({ ...spec, usage, options: withSettingNames(spec.options) }, COMMON_OPTIONS);
  return {
    name: spec.name,
    help,
    examples: spec.examples,
    options: { ...spec.options, ...COMMON_OPTIONS },
    subcommands: spec.subcommands ?? [],
    positionalCompletion: {
      words: spec.subcommands ?? spec.firstWords ?? [],
      // FILE|DIR|WHEEL..., [PATH...], A.json: the positionals name files.
      paths: /FILE|DIR|PATH|\.json/.test(spec.positionals ?? ""),
    },
    parseOptions: parseArgsOptions({ ...spec.options, ...COMMON_OPTIONS }),
    async run(fullArgv) {
      const { argv, bare } = takeBareFlags(fullArgv, spec.options);
      const sub = spec.subcommands?.includes(argv[0] ?? "") ? ` ${argv[0]}` : "";
      const parsed = parseCommandArgs<ParseConfigOf<O>>(
        `${spec.name}${sub}`,
        { args: argv, options: spec.options, allowPositionals: true, tokens: true },
        { outputs: spec.outputs ?? [], outputDirs: spec.outputDirs ?? [] },
      );
      const values = parsed.values as Record<string, unknown>;
      const dir =
        spec.projectFlag && typeof values[spec.projectFlag] === "string" ? values[spec.projectFlag] : ".";
      const fromSettings = await applySettings(spec.name, spec.options, values, bare, resolve(dir as string));
      if (spec.positionals === undefined && parsed.positionals.length > 0) {
        throw new UserError(
          `${spec.name}: unexpected argument "${parsed.positionals[0]}"`,
          spec.unexpectedArgumentHint ?? `run \`gpuprep ${spec.name} --help\` for the flags it takes`,
        );
      }
      try {
        return await spec.run({ ...parsed, fromSettings });
      } catch (error) {
        throw withSettingsOrigin(error, fromSettings);
      }
    },
  };
}

/** Help names the setting a flag defaults to, under its description. */
function withSettingNames(options: OptionTable): OptionTable {
  return Object.fromEntries(
    Object.entries(options).map(([name, option]) => [
      name,
      option.setting
        ? {
            ...option,
            description: `${option.description}\n${option.setting.bare ? "given without NAME: " : ""}setting: ${option.setting.key}`,
          }
        : option,
    ]),
  );
}
