/** Node names in the order people count them: n2 before n10. */
const collator = new Intl.Collator("en", { numeric: true });

export function compareNodeNames(a: string, b: string): number {
  return collator.compare(a, b);
}
