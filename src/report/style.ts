/**
 * Terminal styling: --color always|never decides; --color auto (the default) honours NO_COLOR,
 * then FORCE_COLOR, then whether stdout is a TTY (as uv and gh do).
 */
import { randomBytes } from "node:crypto";
import type { Severity } from "../findings/types.js";

export const COLOR_MODES = ["auto", "always", "never"] as const;
export type ColorMode = (typeof COLOR_MODES)[number];

let colorMode: ColorMode = "auto";

/** Set once by the CLI from --color. */
export function setColorMode(mode: ColorMode): void {
  colorMode = mode;
}

export function useColor(stream: NodeJS.WriteStream = process.stdout): boolean {
  if (colorMode !== "auto") return colorMode === "always";
  if (process.env.NO_COLOR !== undefined && process.env.NO_COLOR !== "") return false;
  if (process.env.FORCE_COLOR !== undefined && process.env.FORCE_COLOR !== "0") return true;
  return stream.isTTY === true;
}

/** Plain functions (property syntax), so `style.red` can be passed on without its object. */
export interface Style {
  red: (text: string) => string;
  yellow: (text: string) => string;
  green: (text: string) => string;
  blue: (text: string) => string;
  dim: (text: string) => string;
  bold: (text: string) => string;
}

/**
 * Our colours travel through the report as tokens (U+E000, a per-process random key, the SGR
 * code, U+E001) and become escape sequences only in report/terminal.ts's writeText, after the
 * text was stripped of every escape: a snapshot, a file name or a package's metadata cannot know
 * the key, so nothing from them is ever coloured or passes for our colour (issue 28 low).
 */
const KEY = randomBytes(8).toString("hex");
const TOKEN = new RegExp(`\uE000${KEY}(\\d{1,2})\uE001`, "g");
const token = (code: number) => `\uE000${KEY}${code}\uE001`;
const wrap = (open: number, close: number) => (text: string) => `${token(open)}${text}${token(close)}`;
const plain = (text: string) => text;

/** Our colour tokens as the SGR sequences they stand for (run after sanitising, never before). */
export function colourTokensToEscapes(text: string): string {
  return text.replace(TOKEN, (_token, code: string) => `\u001b[${code}m`);
}

/** The text without our colour tokens (error messages and JSON carry no colour). */
export function withoutColourTokens(text: string): string {
  return text.replace(TOKEN, "");
}

export function makeStyle(color: boolean): Style {
  if (!color) return { red: plain, yellow: plain, green: plain, blue: plain, dim: plain, bold: plain };
  return {
    red: wrap(31, 39),
    yellow: wrap(33, 39),
    green: wrap(32, 39),
    blue: wrap(34, 39),
    dim: wrap(2, 22),
    bold: wrap(1, 22),
  };
}

/** A finding's colour by severity: red errors, yellow warnings, blue info (doctor's and fleet's reports). */
export function paintSeverity(style: Style, severity: Severity, text: string): string {
  return severity === "error"
    ? style.red(text)
    : severity === "warning"
      ? style.yellow(text)
      : style.blue(text);
}
