/**
 * Help text, rendered from a command's declaration: the flags part is made from the same option
 * table that parseArgs is configured from, so a flag cannot be parsed without being documented or
 * documented without being parsed. The types are structural: src/report knows nothing of src/cli.
 */

/** One flag as help shows it. */
export interface HelpOption {
  type: "string" | "boolean";
  short?: string;
  /** The value's placeholder for a string flag: PATH, NAME, ... */
  value?: string;
  /** May span lines ("\n"); continuation lines are indented under the first. */
  description: string;
  /** A heading shown above the first flag of a group; a change of group starts a new block. */
  group?: string;
  /** parseArgs' default: shown as "(default: X)" where it is a string. */
  default?: unknown;
}

export interface HelpSpec {
  name: string;
  /** What follows "gpuprep NAME: " on the first line. */
  title: string;
  /** After `gpuprep NAME`: one line, or several with what each does. */
  usage: readonly (readonly [args: string, what?: string])[];
  /** A paragraph between usage and the flags. */
  intro?: string;
  options: Readonly<Record<string, HelpOption>>;
  /** Verdicts, exit status: after the flags. */
  outro?: string;
  examples: readonly (readonly [invocation: string, what: string])[];
}

/** Descriptions start in this column at the latest; a longer flag puts its description on the next line. */
const MAX_LABEL = 30;

/** `-p, --partition P`, `--fast`. */
function flagLabel(name: string, option: HelpOption): string {
  const short = option.short ? `-${option.short}, ` : "";
  const value = option.type === "string" && option.value ? ` ${option.value}` : "";
  return `${short}--${name}${value}`;
}

/** Rows of `label  description` with the continuation lines aligned under the description. */
function columns(
  rows: readonly (readonly [label: string, text: string])[],
  width = columnWidth(rows),
  indent = "  ",
): string[] {
  const pad = " ".repeat(indent.length + width);
  const out: string[] = [];
  for (const [label, text] of rows) {
    const [first = "", ...rest] = text.split("\n");
    if (!first) out.push(`${indent}${label}`);
    else if (label.length + 2 > width) out.push(`${indent}${label}`, `${pad}${first}`);
    else out.push(`${indent}${label.padEnd(width)}${first}`);
    for (const line of rest) out.push(`${pad}${line}`);
  }
  return out;
}

function columnWidth(rows: readonly (readonly [label: string, text: string])[]): number {
  return Math.min(MAX_LABEL, Math.max(0, ...rows.map(([label]) => label.length)) + 2);
}

/** The flags, grouped under their headings, in declaration order. */
function renderFlags(options: Readonly<Record<string, HelpOption>>, heading?: string): string {
  const blocks: { heading: string | undefined; rows: [string, string][] }[] = [];
  for (const [name, option] of Object.entries(options)) {
    const last = blocks[blocks.length - 1];
    const block =
      last && last.heading === (option.group ?? heading)
        ? last
        : { heading: option.group ?? heading, rows: [] as [string, string][] };
    if (block !== last) blocks.push(block);
    const fallback = typeof option.default === "string" ? ` (default: ${option.default})` : "";
    block.rows.push([flagLabel(name, option), option.description + fallback]);
  }
  // One width for the whole table, so the columns line up from block to block.
  const width = columnWidth(blocks.flatMap((b) => b.rows));
  const lines: string[] = [];
  for (const [i, block] of blocks.entries()) {
    if (i > 0) lines.push("");
    if (block.heading) lines.push(`${block.heading}:`);
    lines.push(...columns(block.rows, width));
  }
  return lines.join("\n");
}

/** A command's help: title, usage, its flags, what else it says, examples (each pastes into a shell). */
export function renderCommandHelp(spec: HelpSpec, common: Readonly<Record<string, HelpOption>>): string {
  const usage =
    spec.usage.length === 1 && !spec.usage[0]![1]
      ? [`usage: gpuprep ${spec.name} ${spec.usage[0]![0]}`]
      : [
          "usage:",
          ...columns(spec.usage.map(([args, what]) => [`gpuprep ${spec.name} ${args}`, what ?? ""])),
        ];
  const examples = spec.examples.map(([invocation, what]) => `  # ${what}\n  ${invocation}`);
  return [
    `gpuprep ${spec.name}: ${spec.title}`,
    "",
    ...usage,
    ...(spec.intro ? ["", spec.intro] : []),
    "",
    // A command whose flags form no groups has them under "flags:".
    renderFlags(spec.options, Object.values(spec.options).some((o) => o.group) ? undefined : "flags"),
    ...(spec.outro ? ["", spec.outro] : []),
    "",
    "Examples:",
    ...examples,
    "",
    renderFlags(common),
  ].join("\n");
}

/** `gpuprep --help`: every command with its summary. */
export function renderTopLevelHelp(
  version: string,
  commands: readonly { name: string; summary: string }[],
): string {
  return [
    `gpuprep ${version}: make PyTorch run correctly and fast on NVIDIA GPUs`,
    "",
    "usage: gpuprep <command> [flags]",
    "",
    ...commands.map(({ name, summary }) => `  ${name.padEnd(10)}${summary}`),
    "",
    "Every command takes -q/--quiet (no progress line) and -v/--verbose (each command run, timed).",
    "Run `gpuprep help <command>` (or `gpuprep <command> --help`) for a command's flags and examples.",
  ].join("\n");
}
