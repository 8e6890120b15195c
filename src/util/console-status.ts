/**
 * What gpuprep says on stderr while it works: a progress line (only on a terminal, off with
 * -q/--quiet) and, with -v/--verbose, one line per process it runs. Both live here, below the CLI,
 * because the spawn helper in transports/ logs through it; the CLI sets the switches once, when it
 * parses the common flags.
 */

interface ConsoleSettings {
  quiet: boolean;
  verbose: boolean;
}

const settings: ConsoleSettings = { quiet: false, verbose: false };

export function configureConsole(options: Partial<ConsoleSettings>): void {
  if (options.quiet !== undefined) settings.quiet = options.quiet;
  if (options.verbose !== undefined) settings.verbose = options.verbose;
}

/** Carriage return, then erase the whole line: the progress line is redrawn in place, never scrolled. */
const CLEAR_LINE = "\r\u001b[2K";
/** How often the elapsed time on the progress line is redrawn. */
const TICK_MS = 250;
const MIN_REDRAW_MS = 50;

interface ActiveProgress {
  label: string;
  detail: string;
  startedAt: number;
  drawnAt: number;
  timer: NodeJS.Timeout;
}

let active: ActiveProgress | null = null;

function progressWanted(): boolean {
  return !settings.quiet && process.stderr.isTTY === true;
}

function draw(): void {
  if (!active) return;
  const seconds = ((Date.now() - active.startedAt) / 1000).toFixed(1);
  active.drawnAt = Date.now();
  const text = `${active.label}${active.detail ? `: ${active.detail}` : ""} (${seconds} s)`;
  // A line wider than the terminal wraps, and \r would then redraw only its last row.
  const width = Math.max(20, (process.stderr.columns || 80) - 1);
  process.stderr.write(CLEAR_LINE + (text.length > width ? `${text.slice(0, width - 1)}…` : text));
}

function erase(): void {
  if (active) process.stderr.write(CLEAR_LINE);
}

export interface Progress {
  /** Replaces what the line says after the label ("12/152 libtorch_cuda.so"). */
  update(detail: string): void;
  /** Removes the line; call it before the report is printed. Safe to call twice. */
  end(): void;
}

const SILENT: Progress = { update: () => {}, end: () => {} };

/**
 * Shows `label: detail (elapsed s)` on stderr, redrawn in place, until end(). Off (a no-op) when
 * stderr is not a terminal or -q was given, so pipes, files and CI logs never see it.
 */
export function startProgress(label: string, detail = ""): Progress {
  if (!progressWanted()) return SILENT;
  endProgress();
  const timer = setInterval(draw, TICK_MS);
  timer.unref(); // the line must never keep gpuprep alive
  const mine: ActiveProgress = { label, detail, startedAt: Date.now(), drawnAt: 0, timer };
  active = mine;
  draw();
  return {
    update(next) {
      if (active !== mine) return;
      mine.detail = next;
      // A scan reports every file; the terminal needs a few redraws a second, the ticker does the rest.
      if (Date.now() - mine.drawnAt >= MIN_REDRAW_MS) draw();
    },
    end() {
      if (active === mine) endProgress();
    },
  };
}

/** Removes any progress line: before an error message, a verbose line or the report. */
export function endProgress(): void {
  if (!active) return;
  clearInterval(active.timer);
  erase();
  active = null;
}

/** With -v: one line on stderr, printed above the progress line, which is redrawn below it. */
export function logVerbose(line: string): void {
  if (!settings.verbose) return;
  erase();
  // Arguments may carry anything (a hostile container name); no control character reaches the terminal.
  // eslint-disable-next-line no-control-regex
  process.stderr.write(`gpuprep: ${line.replace(/[\u0000-\u001f\u007f-\u009f]/g, "?")}\n`);
  draw();
}

/** -q and -v as set so far (main sets them for flags given before the command). */
export function consoleFlags(): Readonly<ConsoleSettings> {
  return { ...settings };
}

export function verboseEnabled(): boolean {
  return settings.verbose;
}
