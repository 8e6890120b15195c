#!/usr/bin/env node
/** gpuprep's entry point: dispatch to a subcommand, and turn any failure into one line and exit 2. */
import { UserError, errorMessage } from "../errors.js";
import { EXIT_TOOL_ERROR } from "./command.js";
import { COMMANDS } from "./commands.js";
import { TOOL_VERSION } from "../version.js";
import { envelope } from "../report/envelope.js";
import { ERROR_SCHEMA_ID, ERROR_SCHEMA_VERSION } from "../report/document-ids.js";
import { disableKnowledgeBaseOverlay } from "../kb/overlay-switch.js";
import { oneLine, writeText } from "../report/terminal.js";
import { renderTopLevelHelp } from "../report/help-text.js";
import { configureConsole, consoleFlags, endProgress } from "../util/console-status.js";
import { setColorMode } from "../report/style.js";
import { checkQuietVerbose, checkedColorMode } from "./args.js";

/** `gpuprep help CMD` prints what `gpuprep CMD --help` prints: both come from here. */
async function printCommandHelp(name: string): Promise<number> {
  const entry = COMMANDS[name];
  if (!entry) {
    throw new UserError(`unknown topic '${name}'`, `topics: ${Object.keys(COMMANDS).join(", ")}`);
  }
  writeText(`${(await entry.load()).help}\n`);
  return 0;
}

function printUsage(stream: "stdout" | NodeJS.WriteStream = "stdout", code = 0): number {
  const commands = Object.entries(COMMANDS).map(([name, { summary }]) => ({ name, summary }));
  const text = `${renderTopLevelHelp(TOOL_VERSION, commands)}\n`;
  if (stream === "stdout") writeText(text);
  else stream.write(text);
  return code;
}

/** -q, -v, --color and --no-overlay may also come before the command: `gpuprep -v doctor`. */
function takeLeadingCommonFlags(argv: string[]): string[] {
  let i = 0;
  for (; i < argv.length; i++) {
    const flag = argv[i]!;
    if (flag === "-q" || flag === "--quiet") configureConsole({ quiet: true });
    else if (flag === "-v" || flag === "--verbose") configureConsole({ verbose: true });
    else if (flag === "--no-overlay") disableKnowledgeBaseOverlay();
    else if (flag.startsWith("--color=")) setColorMode(checkedColorMode("", flag.slice("--color=".length)));
    else if (flag === "--color") setColorMode(checkedColorMode("", argv[++i] ?? ""));
    else break;
  }
  const { quiet, verbose } = consoleFlags();
  checkQuietVerbose("", quiet, verbose);
  return argv.slice(i);
}

async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = takeLeadingCommonFlags(argv);
  if (name === "help" && rest.length > 0) {
    if (rest.length > 1)
      throw new UserError(
        `help: one topic at a time, not "${rest.join(" ")}"`,
        `e.g. gpuprep help ${rest[0]}`,
      );
    return printCommandHelp(rest[0]!);
  }
  // No command is a usage error (as git and uv have it): the help goes to stderr, exit 2.
  if (name === undefined) return printUsage(process.stderr, EXIT_TOOL_ERROR);
  if (name === "--help" || name === "-h" || name === "help") return printUsage();
  if (name === "--version" || name === "-V") {
    writeText(`${TOOL_VERSION}\n`);
    return 0;
  }
  const entry = COMMANDS[name];
  if (!entry) {
    throw new UserError(`unknown command "${name}"`, `commands: ${Object.keys(COMMANDS).join(", ")}`);
  }
  // Only before `--`: what follows it is passed on (fleet's srun arguments).
  const flags = rest.includes("--") ? rest.slice(0, rest.indexOf("--")) : rest;
  if (flags.includes("--help") || flags.includes("-h")) return printCommandHelp(name);
  return (await entry.load()).run(rest);
}

/**
 * The one-line message (and hint) on stderr; under --json also one JSON line after them, so a
 * script that reads JSON gets the failure in the same contract as a result (the envelope, then
 * `error`), with the exit status it will see.
 */
function reportFatal(error: unknown, json = false): number {
  endProgress(); // the error gets its own line, not the tail of the progress line
  const known = asUserError(error);
  const message = oneLine(known ? known.message : errorMessage(error));
  const hint = known
    ? known.hint
      ? oneLine(known.hint)
      : null
    : "rerun with GPUPREP_DEBUG=1 for the stack trace, and report it";
  process.stderr.write(`gpuprep: ${known ? "error" : "internal error"}: ${message}\n`);
  if (hint) process.stderr.write(`  hint: ${hint}\n`);
  if (json) {
    const body = { error: { kind: known ? "usage" : "internal", message, hint }, exitCode: EXIT_TOOL_ERROR };
    process.stderr.write(
      JSON.stringify({ ...envelope(ERROR_SCHEMA_ID, ERROR_SCHEMA_VERSION), ...body }) + "\n",
    );
  }
  if (process.env.GPUPREP_DEBUG) process.stderr.write(`${(error as Error)?.stack ?? ""}\n`);
  return EXIT_TOOL_ERROR;
}

/** --json among the flags (not after `--`, where fleet passes srun's own arguments). */
function wantsJson(argv: string[]): boolean {
  const flags = argv.includes("--") ? argv.slice(0, argv.indexOf("--")) : argv;
  return flags.includes("--json");
}

/**
 * Failures the user's input causes that escaped a command's own checks: a file operation on the
 * wrong kind of path (EISDIR, ENOTDIR, ...) and input nested so deep that rendering it overflows
 * the stack. Both are the user's to fix, so they get a line and a hint, not "internal error".
 */
function asUserError(error: unknown): UserError | null {
  if (error instanceof UserError) return error;
  const system = error as NodeJS.ErrnoException | null;
  const path = typeof system?.path === "string" ? system.path : null;
  const reasons: Record<string, string> = {
    EISDIR: "is a directory",
    ENOTDIR: "a part of the path is not a directory",
    ENOENT: "no such file or directory",
    EACCES: "permission denied",
    EPERM: "operation not permitted",
    ELOOP: "too many symbolic links",
    ENOSPC: "no space left on the device",
  };
  const reason = system?.code ? reasons[system.code] : undefined;
  if (path && reason) return new UserError(`${path}: ${reason}`, "check the paths given on the command line");
  if (error instanceof RangeError && /call stack/i.test(error.message)) {
    return new UserError(
      "the input is nested too deeply to process",
      "check the files given with --from, --project or on the command line",
    );
  }
  return null;
}

/**
 * stdout closed early (`gpuprep scan DIR | head -1`): nobody reads the rest, so stop quietly with
 * the status so far, as a SIGPIPE would, instead of an unhandled 'error' event's stack trace.
 */
function exitQuietlyOnClosedPipe(stream: NodeJS.WriteStream): void {
  stream.on("error", (error: NodeJS.ErrnoException) => {
    if (error.code === "EPIPE") process.exit(typeof process.exitCode === "number" ? process.exitCode : 0);
    throw error;
  });
}
exitQuietlyOnClosedPipe(process.stdout);
exitQuietlyOnClosedPipe(process.stderr);

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    process.exitCode = reportFatal(error, wantsJson(process.argv.slice(2)));
  },
);
