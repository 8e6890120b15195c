/** PEP 503 name normalisation: lower case, runs of "-", "_" and "." collapsed to "-". */
export function normalizeName(name: string): string {
  return name.toLowerCase().replace(/[-_.]+/g, "-");
}
