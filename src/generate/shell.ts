/** Shell pieces the generated scripts share, so run-container.sh and setup-native.sh cannot drift apart. */

/** A bash function: true when version $1 >= version $2 (dotted numbers, via sort -V). */
export const VERSION_AT_LEAST = `version_at_least() {
  [ "$(printf '%s\\n%s\\n' "$2" "$1" | sort -V | head -n 1)" = "$2" ]
}`;
