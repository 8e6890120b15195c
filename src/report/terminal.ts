/* eslint-disable no-control-regex -- this file is about control characters and escape sequences */
/**
 * What reaches a terminal. Text reports interpolate values from facts, snapshots and file names;
 * a hostile snapshot could carry escape sequences that retitle the terminal (OSC), clear the
 * screen (CSI J) or rewrite earlier lines (\r, cursor moves). Everything but the colours our own
 * Style emits is removed here, once, for every text output.
 */

/** The exact SGR sequences src/report/style.ts writes (bold, dim, four colours, their resets). */
const OUR_SGR = /^\u001b\[(?:1|2|22|31|32|33|34|39)m/;
/** CSI (ESC [ ... final byte), OSC (ESC ] ... BEL or ESC \, or cut off), or ESC and one byte. */
const ESCAPE = /\u001b(?:\[[0-?]*[ -/]*[@-~]?|\][^\u0007\u001b\n]*(?:\u0007|\u001b\\)?|[^])?/g;
/** C0 but tab and newline, DEL, and C1 (which some terminals read as 8-bit CSI/OSC). */
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g;

/** `text` with every control character and escape sequence removed except newlines, tabs and our colours. */
export function sanitizeForTerminal(text: string): string {
  if (!/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/.test(text)) return text;
  const withoutEscapes = text.replace(ESCAPE, (sequence) => (OUR_SGR.test(sequence) ? sequence : ""));
  // Our colours survive the control pass by being cut out and put back around it.
  return withoutEscapes
    .split(/(\u001b\[(?:1|2|22|31|32|33|34|39)m)/)
    .map((part, index) => (index % 2 === 1 ? part : part.replace(CONTROL, "")))
    .join("");
}

/** One line for an error message: control characters gone, line breaks and tabs become spaces. */
export function oneLine(text: string, max = 500): string {
  const flat = sanitizeForTerminal(text.replace(/\u001b\[(?:1|2|22|31|32|33|34|39)m/g, ""))
    .replace(/\s+/g, " ")
    .trim();
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
  writeStdout(sanitizeForTerminal(text));
}

/**
 * A machine document (JSON, YAML manifests) as it is: JSON.stringify already escapes the
 * control characters a terminal acts on, and a document's bytes must not be changed.
 */
export function writeDocument(text: string): void {
  writeStdout(text);
}
