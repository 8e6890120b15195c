/**
 * Flag parsing on node:util's parseArgs, for every command: the flags they all take (-q, -v), the
 * check of output paths before any work starts, and parseArgs' errors as one-line UserErrors.
 */
import { parseArgs, type ParseArgsConfig } from "node:util";
import { UserError, errorMessage } from "../errors.js";
import { configureConsole, consoleFlags } from "../util/console-status.js";
import { checkOutputPath } from "../util/write-output.js";
import { disableKnowledgeBaseOverlay } from "../kb/overlay-switch.js";
import type { HelpOption } from "../report/help-text.js";
import { COLOR_MODES, setColorMode, type ColorMode } from "../report/style.js";

const COMMON_GROUP = "common flags (every command)";

type ParseArgsOptionConfig = NonNullable<ParseArgsConfig["options"]>[string];

export type ParsedArgs<T extends ParseArgsConfig> = ReturnType<typeof parseArgs<T>>;

/** Taken by every command, so they are parsed here once and never declared by a command. */
export const COMMON_OPTIONS = {
  quiet: {
    type: "boolean",
    short: "q",
    description: "no progress line on the terminal",
    group: COMMON_GROUP,
  },
  verbose: {
    type: "boolean",
    short: "v",
    description: "print each command gpuprep runs, with its time, on stderr",
    group: COMMON_GROUP,
  },
  color: {
    type: "string",
    value: "auto|always|never",
    description: "colour in text reports; auto (default) follows NO_COLOR, FORCE_COLOR and the terminal",
    group: COMMON_GROUP,
  },
  "no-overlay": {
    type: "boolean",
    description:
      "the knowledge base as released, without what `gpuprep kb update` fetched\n(reports say when an overlay was used)",
    group: COMMON_GROUP,
  },
} as const satisfies Record<string, HelpOption>;

/** --color's value, refused in one line when it is none of the three. */
export function checkedColorMode(command: string, value: string): ColorMode {
  if ((COLOR_MODES as readonly string[]).includes(value)) return value as ColorMode;
  throw new UserError(
    `${command ? `${command}: ` : ""}--color "${value}" is not one of ${COLOR_MODES.join(", ")}`,
    "e.g. --color never (or set NO_COLOR=1)",
  );
}

/** -q and -v together ask for less and for more output: refused rather than one silently winning. */
export function checkQuietVerbose(command: string, quiet: boolean, verbose: boolean): void {
  if (quiet && verbose)
    throw new UserError(
      `${command ? `${command}: ` : ""}--quiet and --verbose cannot be combined`,
      "-q drops the progress line, -v adds a line per command run: give one of them",
    );
}

/** An option as parseArgs takes it: its own fields (type, short, multiple, default), not help's. */
function parseArgsOption(option: HelpOption & { multiple?: boolean }): ParseArgsOptionConfig {
  return {
    type: option.type,
    ...(option.short !== undefined ? { short: option.short } : {}),
    ...(option.multiple !== undefined ? { multiple: option.multiple } : {}),
    ...(option.default !== undefined ? { default: option.default } : {}),
  } as ParseArgsOptionConfig;
}

/** A whole option table as parseArgs takes it. */
export function parseArgsOptions(
  table: Readonly<Record<string, HelpOption & { multiple?: boolean }>>,
): Record<string, ParseArgsOptionConfig> {
  return Object.fromEntries(Object.entries(table).map(([name, option]) => [name, parseArgsOption(option)]));
}

export interface CommandArgsOptions {
  /** Flags naming a file or directory the command writes: checked before anything runs. */
  outputs?: readonly string[];
  /** Flags naming a directory the command creates and writes into. */
  outputDirs?: readonly string[];
}

/**
 * parseArgs in strict mode; unknown flags and missing values become `gpuprep: error: ...` plus a
 * hint. Sets -q/-v for the whole run and checks the output paths named in `options.outputs`.
 */
export function parseCommandArgs<T extends ParseArgsConfig>(
  command: string,
  config: T,
  options: CommandArgsOptions = {},
): ParsedArgs<T> {
  let parsed: ParsedArgs<T>;
  try {
    // strict by default: unknown flags throw
    parsed = parseArgs({
      ...config,
      options: parseArgsOptions({ ...config.options, ...COMMON_OPTIONS }),
    }) as ParsedArgs<T>;
  } catch (error) {
    // parseArgs messages run on with advice about "--"; keep the first sentence.
    const message = errorMessage(error).split(". ")[0]?.replace(/\.$/, "") ?? "invalid arguments";
    throw new UserError(`${command}: ${message}`, `run \`gpuprep ${command} --help\` for the flags it takes`);
  }
  const values = parsed.values as Record<string, unknown>;
  checkQuietVerbose(
    command,
    values.quiet === true || consoleFlags().quiet,
    values.verbose === true || consoleFlags().verbose,
  );
  // Only switched on here: `gpuprep -v doctor` set it before the command's flags were parsed.
  if (values.quiet === true) configureConsole({ quiet: true });
  if (values.verbose === true) configureConsole({ verbose: true });
  if (typeof values.color === "string") setColorMode(checkedColorMode(command, values.color));
  if (values["no-overlay"] === true) disableKnowledgeBaseOverlay();
  for (const flag of options.outputs ?? []) {
    const value = values[flag];
    if (typeof value === "string") checkOutputPath(value, `--${flag}`, command);
  }
  for (const flag of options.outputDirs ?? []) {
    const value = values[flag];
    if (typeof value === "string") checkOutputPath(value, `--${flag}`, command, "dir");
  }
  return parsed;
}

/**
 * Where the command runs is one place: of `flags` (container, image, ssh, from...) at most one may
 * be given; the first two given are named in the error.
 */
export function onePlace(
  command: string,
  values: Record<string, unknown>,
  flags: readonly string[],
  hint: string,
): string | null {
  const given = flags.filter((flag) => values[flag] !== undefined);
  if (given.length > 1)
    throw new UserError(`${command}: --${given[0]} and --${given[1]} cannot be combined`, hint);
  return given[0] ?? null;
}

/** --import-check's names are dotted identifiers; anything else would only fail obscurely in the probe. */
export function checkedModuleNames(command: string, names: readonly string[]): string[] {
  for (const name of names) {
    if (!/^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$/.test(name)) {
      throw new UserError(
        `${command}: --import-check "${name}" is not a Python module name`,
        "give the name you would write after `import`, e.g. --import-check my_ext",
      );
    }
  }
  return [...names];
}

/** validate's --only: comma-separated section names, each one the payload knows. */
export function checkedOnlyNames(command: string, text: string, known: readonly string[]): string[] {
  const names = text
    .split(",")
    .map((n) => n.trim())
    .filter(Boolean);
  const unknown = names.filter((n) => !known.includes(n));
  if (names.length === 0 || unknown.length > 0) {
    throw new UserError(
      `${command}: --only does not know "${unknown.join(", ") || text}"`,
      `names: ${known.join(", ")}`,
    );
  }
  return names;
}
