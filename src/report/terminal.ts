/* eslint-disable no-control-regex -- this file is about control characters and escape sequences */
/**
 * What reaches a terminal. Text reports interpolate values from facts, snapshots and file names;
 * a hostile snapshot could carry escape sequences that retitle the terminal (OSC), clear the
 * screen (CSI J), rewrite earlier lines (\r, cursor moves) or colour a line red, and bidi
 * controls (U+202E) that show text in another order than it is. All of it is removed here, for
 * every text output, terminal or not; our own colours are tokens (report/style.ts) that become
 * escape sequences only after this pass, so none can be forged from the input.
 */
import { colourTokensToEscapes, withoutColourTokens } from "./style.js";

/** CSI (ESC [ ... final byte), OSC (ESC ] ... BEL or ESC \, or cut off), or ESC and one character. */
const ESCAPE = /\u001b(?:\[[0-?]*[ -/]*[@-~]?|\][^\u0007\u001b\n]*(?:\u0007|\u001b\\)?|[^])?/g;
/**
 * C0 but tab and newline, DEL, C1 (which some terminals read as 8-bit CSI/OSC), and the bidi
 * controls: ALM, LRM, RLM, the embeddings and overrides (U+202A-U+202E) and the isolates
 * (U+2066-U+2069), as Unicode's "Trojan Source" advisory (CVE-2021-42574) lists them.
 */
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;
const ANY_CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/;

/** `text` with every escape sequence, control character and bidi control removed but newlines and tabs. */
export function sanitizeForTerminal(text: string): string {
  if (!ANY_CONTROL.test(text)) return text;
  return text.replace(ESCAPE, "").replace(CONTROL, "");
}

/** One line for an error message: control characters gone, line breaks and tabs become spaces. */
export function oneLine(text: string, max = 500): string {
  const flat = sanitizeForTerminal(withoutColourTokens(text)).replace(/\s+/g, " ").trim();
  return flat.length > max ? `${flat.slice(0, max)}…` : flat;
}

/**
 * The one writer to stdout, for every command. A closed pipe (`| head -1`) is handled once, in
 * main, on the stream itself.
 */
function writeStdout(text: string): void {
  process.stdout.write(text);
}

/** A text report, sanitized: values from facts and files must not steer the terminal. */
export function writeText(text: string): void {
  writeStdout(colourTokensToEscapes(sanitizeForTerminal(text)));
}

/**
 * A machine document (JSON, YAML manifests) as it is: JSON.stringify already escapes the
 * control characters a terminal acts on, and a document's bytes must not be changed.
 */
export function writeDocument(text: string): void {
  writeStdout(text);
}
