/**
 * The one shape of a command: its options (each with its help), positionals, examples and run,
 * declared once with defineCommand (its one-line summary is in commands.ts, beside its loader). The parseArgs configuration and the help text are both
 * made from that declaration, so they cannot disagree.
 */
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

/** One flag: what parseArgs needs (type, short, multiple, default) and what help shows. */
export interface OptionSpec extends HelpOption {
  multiple?: boolean;
  default?: string | boolean | string[] | boolean[];
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

export interface CommandSpec<O extends OptionTable> extends Omit<HelpSpec, "options" | "usage"> {
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
  /** Output paths checked before anything runs. */
  outputs?: CommandArgsOptions["outputs"];
  outputDirs?: CommandArgsOptions["outputDirs"];
  run(parsed: Parsed<O>): Promise<number>;
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
  /** 0: clean / passed; 1: findings of error severity / checks failed; 2: the tool could not run. */
  run(argv: string[]): Promise<number>;
}

export const EXIT_OK = 0;
export const EXIT_FINDINGS = 1;
export const EXIT_TOOL_ERROR = 2;

export function defineCommand<const O extends OptionTable>(spec: CommandSpec<O>): Command {
  const usage = spec.usage ?? [[`[flags]${spec.positionals ? ` ${spec.positionals}` : ""}`] as const];
  const help = renderCommandHelp({ ...spec, usage }, COMMON_OPTIONS);
  return {
    name: spec.name,
    help,
    examples: spec.examples,
    parseOptions: parseArgsOptions({ ...spec.options, ...COMMON_OPTIONS }),
    async run(argv) {
      const sub = spec.subcommands?.includes(argv[0] ?? "") ? ` ${argv[0]}` : "";
      const parsed = parseCommandArgs<ParseConfigOf<O>>(
        `${spec.name}${sub}`,
        { args: argv, options: spec.options, allowPositionals: true, tokens: true },
        { outputs: spec.outputs ?? [], outputDirs: spec.outputDirs ?? [] },
      );
      if (spec.positionals === undefined && parsed.positionals.length > 0) {
        throw new UserError(
          `${spec.name}: unexpected argument "${parsed.positionals[0]}"`,
          spec.unexpectedArgumentHint ?? `run \`gpuprep ${spec.name} --help\` for the flags it takes`,
        );
      }
      return spec.run(parsed);
    },
  };
}
