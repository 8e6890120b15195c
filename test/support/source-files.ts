import { readdirSync, statSync } from "node:fs";
import { join } from "node:path";

/** Every non-test TypeScript module below `dir` (the modules the layering and edge checks read). */
export function sourceFiles(dir: string, out: string[] = []): string[] {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) sourceFiles(path, out);
    else if (name.endsWith(".ts") && !name.endsWith(".test.ts")) out.push(path);
  }
  return out;
}
