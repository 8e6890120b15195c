/**
 * The knowledge base writes some values as text that schema.ts holds to one shape (a compute
 * capability "9.0", a driver "580.65.06", an NGC release "25.09"). Each kind becomes its typed value
 * in one place (kb/capability.ts, kb/driver.ts, kb/image-tag.ts) through a parser made here: once
 * per distinct text, cached, so queries, the plan and the rules carry the value and never parse a
 * row again.
 */

/**
 * A parser of one kind of row text: `parse` runs once per distinct text and its value is kept. Text
 * the schema would have refused throws `knowledge base: "TEXT" is not EXPECTED`.
 */
export function rowParser<T>(parse: (text: string) => T | null, expected: string): (text: string) => T {
  const parsed = new Map<string, T>();
  return (text) => {
    const known = parsed.get(text);
    if (known !== undefined) return known;
    const value = parse(text);
    if (value === null) throw new Error(`knowledge base: "${text}" is not ${expected}`);
    parsed.set(text, value);
    return value;
  };
}
