/** Shell pieces the generated scripts share, so run-container.sh and setup-native.sh cannot drift apart. */

/** A bash function: true when version $1 >= version $2 (dotted numbers, via sort -V). */
export const VERSION_AT_LEAST = `version_at_least() {
  [ "$(printf '%s\\n%s\\n' "$2" "$1" | sort -V | head -n 1)" = "$2" ]
}`;

/** Quotes a word for sh unless it is plainly safe (requirement specifiers with < or > are quoted). */
export function shellQuote(text: string): string {
  return /^[A-Za-z0-9._=<>~!,/:+@-]+$/.test(text) && !/[<>]/.test(text)
    ? text
    : `'${text.replace(/'/g, `'\\''`)}'`;
}
