/**
 * Text from outside (a snapshot's GPU name, a directory name, a flag) on one line: every control
 * character, and the Unicode line/paragraph separators that YAML and some editors treat as line
 * breaks, becomes a space. A newline that reached a generated file's comment would start a new
 * shell command, Dockerfile instruction or YAML key.
 */
// eslint-disable-next-line no-control-regex
const LINE_BREAKING = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/g;

export function singleLine(text: string): string {
  return text.replace(LINE_BREAKING, " ");
}

export function hasControlCharacters(text: string): boolean {
  return singleLine(text) !== text;
}

/** A value quoted for an error message: one line, at most `max` characters. */
export function quotedForMessage(text: string, max = 60): string {
  const short = text.length > max ? `${text.slice(0, max)}...` : text;
  return `"${singleLine(short)}"`;
}
