/**
 * Quoting for each kind of generated file, so a value from the project, a snapshot or a flag is
 * data there and never syntax: shell words, Dockerfile ENV values, TOML strings and keys, Compose
 * interpolation. Values reach these already validated (src/cli/init.ts, src/plan/project-name.ts);
 * quoting is the second wall.
 */
import { singleLine } from "../util/single-line.js";

export { singleLine };

/**
 * Quotes a word for sh unless it is plainly safe (requirement specifiers with < or > are quoted).
 * Single quotes, or double quotes with $ and ` escaped where the text holds them (the same word
 * either way; shellcheck reads a literal `$(` in single quotes as a mistake).
 */
export function shellQuote(text: string): string {
  // ~ starts a tilde expansion at the start of a word, and in bash after = or : too (a=~root).
  const tilde = /(^|[=:])~/.test(text);
  if (/^[A-Za-z0-9._=<>~!,/:+@-]+$/.test(text) && !/[<>]/.test(text) && !tilde) return text;
  if (/[$`]/.test(text)) return shellDoubleQuoted(text);
  return `'${text.replace(/'/g, `'\\''`)}'`;
}

/** A Dockerfile ENV/ARG value in double quotes: the parser unescapes \\, \" and \$ there. */
export function dockerfileQuoted(text: string): string {
  return `"${singleLine(text).replace(/[\\"$]/g, (c) => `\\${c}`)}"`;
}

/** A TOML basic string: JSON's escapes are TOML's, plus DEL, which TOML also forbids raw. */
export function tomlString(text: string): string {
  return JSON.stringify(text).replace(/\u007f/g, "\\u007f");
}

/** A TOML key: bare where TOML allows it; a dotted name (zope.interface) must be quoted or it nests. */
export function tomlKey(name: string): string {
  return /^[A-Za-z0-9_-]+$/.test(name) ? name : tomlString(name);
}

/** A string Compose must not interpolate: `$` is its variable syntax, `$$` a literal dollar. */
export function composeLiteral(text: string): string {
  return text.replace(/\$/g, "$$$$");
}

/** A value inside sh double quotes: $, `, " and \ escaped, so nothing in it expands. */
export function shellDoubleQuoted(text: string): string {
  return `"${text.replace(/[$`"\\]/g, (c) => `\\${c}`)}"`;
}
