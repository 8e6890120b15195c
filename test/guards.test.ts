/**
 * The guards `npm run lint` runs beside ESLint's own rules (scripts/guards/, CONTRIBUTING.md
 * "Guards"): each fires on the code it forbids and stays silent on the code it allows. They run
 * here through ESLint's Linter on source text, with the repository's rule modules.
 */
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import { ESLint, Linter } from "eslint";
import tseslint from "typescript-eslint";

const REPO = fileURLToPath(new URL("../../", import.meta.url));
const guard = async (name: string) => import(new URL(`../../scripts/guards/${name}`, import.meta.url).href);
const layers = (await guard("eslint-layers.mjs")).default;
const { plugin: functionLimits } = await guard("function-limits.mjs");
const cycles = (await guard("eslint-cycles.mjs")).default;
const { plugin: unusedExports } = await guard("unused-exports.mjs");

/** The messages of one guard rule on `text`, as if it were the file `file` (absolute). */
function lint(text: string, file: string, rule: string, options: unknown[] = []): Linter.LintMessage[] {
  // cwd "/": files of a temporary repository lie outside this checkout and must match "**/*.ts" too.
  const linter = new Linter({ configType: "flat", cwd: "/" });
  const config: Linter.Config[] = [
    {
      files: ["**/*.ts"],
      languageOptions: { parser: tseslint.parser },
      plugins: {
        gpuprep: {
          rules: { ...layers.rules, ...functionLimits.rules, ...cycles.rules, ...unusedExports.rules },
        },
      },
      rules: { [`gpuprep/${rule}`]: ["error", ...options] },
    },
  ];
  const messages = linter.verify(text, config, file);
  assert.ok(!messages.some((m) => m.fatal), JSON.stringify(messages));
  return messages;
}

test("layers: a forbidden import is an error where it is written, an allowed one is not", () => {
  const inReport = join(REPO, "src", "report", "example.ts");
  const forbidden = lint('import type { Style } from "../cli/output.js";\n', inReport, "layers");
  assert.equal(forbidden.length, 1);
  assert.match(forbidden[0]!.message, /report may not import from cli/);
  assert.equal(forbidden[0]!.line, 1);
  assert.deepEqual(lint('import { x } from "../facts/schema.js";\n', inReport, "layers"), []);
  // issue 25's remote layer: gather may read it, remote may not reach up into gather.
  const inGather = join(REPO, "src", "gather", "example.ts");
  assert.deepEqual(lint('export { scanWheel } from "../remote/wheel.js";\n', inGather, "layers"), []);
  const inRemote = join(REPO, "src", "remote", "example.ts");
  assert.match(
    lint('const m = await import("../gather/probe.js");\n', inRemote, "layers")[0]?.message ?? "",
    /remote may not import from gather/,
  );
  assert.match(
    lint('import { spawn } from "node:child_process";\n', inRemote, "layers")[0]?.message ?? "",
    /only src\/transports starts processes/,
  );
  assert.deepEqual(
    lint('import { spawn } from "node:child_process";\n', join(REPO, "src", "transports", "x.ts"), "layers"),
    [],
  );
});

/** A function of `n` statement lines (plus its two braces), blank lines and comments between them. */
function functionOf(name: string, n: number): string {
  const body = Array.from({ length: n }, (_, i) => `  total += ${i};\n\n  // step ${i}`).join("\n");
  return `export function ${name}(): number {\n  let total = 0;\n${body}\n  return total;\n}\n`;
}

test("function-limits: a new function over 60 lines fails; a listed one may shrink only with its entry", () => {
  const dir = mkdtempSync(join(tmpdir(), "gpuprep-ratchet-"));
  try {
    const file = join(REPO, "src", "example", "long.ts");
    const ratchet = (functions: Record<string, unknown>) => {
      const path = join(dir, `r${Math.random()}.json`);
      writeFileSync(path, JSON.stringify({ functions: { "src/example/long.ts": functions } }));
      return [{ ratchet: path }];
    };
    // 2 + 57 + 2 = 61 counted lines: blank lines and comments are not counted.
    const long = functionOf("long", 57);
    const fresh = lint(long, file, "function-limits", ratchet({}));
    assert.equal(fresh.length, 1);
    assert.match(fresh[0]!.message, /long has lines 61, over the limit of 60/);
    assert.deepEqual(lint(functionOf("short", 56), file, "function-limits", ratchet({})), []);
    assert.deepEqual(lint(long, file, "function-limits", ratchet({ long: { lines: 61 } })), []);
    assert.match(
      lint(long, file, "function-limits", ratchet({ long: { lines: 60 } }))[0]?.message ?? "",
      /more than the 60 eslint-ratchet.json allows/,
    );
    assert.match(
      lint(long, file, "function-limits", ratchet({ long: { lines: 70 } }))[0]?.message ?? "",
      /down to lines 61 .*lower its entry/,
    );
    assert.match(
      lint(functionOf("long", 10), file, "function-limits", ratchet({ long: { lines: 61 } }))[0]?.message ??
        "",
      /within the lines limit of 60 now: remove it/,
    );
    const branches = Array.from({ length: 15 }, (_, i) => `  if (x === ${i}) return ${i};`).join("\n");
    const complex = `export function pick(x: number): number {\n${branches}\n  return -1;\n}\n`;
    assert.match(
      lint(complex, file, "function-limits", ratchet({}))[0]?.message ?? "",
      /pick has complexity 16, over the limit of 15/,
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("no-import-cycle: a new circle fails on each of its files; a listed one passes; a broken one must leave the list", () => {
  const repo = mkdtempSync(join(tmpdir(), "gpuprep-cycles-"));
  try {
    mkdirSync(join(repo, "src", "x"), { recursive: true });
    const a = 'import { b } from "./b.js";\nexport const a = () => b;\n';
    writeFileSync(join(repo, "src", "x", "a.ts"), a);
    writeFileSync(
      join(repo, "src", "x", "b.ts"),
      'import type { a } from "./a.js";\nexport const b = 1 as unknown as typeof a;\n',
    );
    writeFileSync(join(repo, "src", "x", "c.ts"), 'import { a } from "./a.js";\nexport const c = a;\n');
    const options = (importCircles: string[][]) => {
      const path = join(repo, `ratchet-${Math.random()}.json`);
      writeFileSync(path, JSON.stringify({ functions: {}, importCircles }));
      return [{ repo, ratchet: path }];
    };
    const file = join(repo, "src", "x", "a.ts");
    const found = lint(a, file, "no-import-cycle", options([]));
    assert.equal(found.length, 1);
    assert.match(found[0]!.message, /src\/x\/a\.ts is in an import circle: src\/x\/a\.ts -> src\/x\/b\.ts/);
    // c imports a but is in no circle.
    assert.deepEqual(lint("", join(repo, "src", "x", "c.ts"), "no-import-cycle", options([])), []);
    assert.deepEqual(lint(a, file, "no-import-cycle", options([["src/x/a.ts", "src/x/b.ts"]])), []);
    const listed3 = [["src/x/a.ts", "src/x/b.ts", "src/x/c.ts"]];
    assert.match(
      lint(a, file, "no-import-cycle", options(listed3))[0]?.message ?? "",
      /is now .*update eslint-ratchet.json/,
    );
  } finally {
    rmSync(repo, { recursive: true, force: true });
  }
});

test("no-unused-export: an export no other file imports fails (over-exported or dead); a listed one passes; a used one must leave the list", () => {
  const repo = mkdtempSync(join(tmpdir(), "gpuprep-unused-"));
  try {
    mkdirSync(join(repo, "src", "x"), { recursive: true });
    mkdirSync(join(repo, "test"), { recursive: true });
    const a = [
      "export const used = 1;",
      "export const usedByTest = 2;",
      "export function local() { return 3; }",
      "export const dead = local();",
      "export type Shape = { n: number };",
      "",
    ].join("\n");
    writeFileSync(join(repo, "src", "x", "a.ts"), a);
    writeFileSync(join(repo, "src", "x", "b.ts"), 'import { used } from "./a.js";\nexport const b = used;\n');
    writeFileSync(join(repo, "src", "index.ts"), 'export { b } from "./x/b.js";\n');
    writeFileSync(
      join(repo, "test", "a.test.ts"),
      'import { usedByTest } from "../src/x/a.js";\nvoid usedByTest;\n',
    );
    const options = (unused: Record<string, string[]>) => {
      const path = join(repo, `ratchet-${Math.random()}.json`);
      writeFileSync(path, JSON.stringify({ functions: {}, importCircles: [], unusedExports: unused }));
      return [{ repo, ratchet: path }];
    };
    const file = join(repo, "src", "x", "a.ts");
    const found = lint(a, file, "no-unused-export", options({}));
    assert.deepEqual(
      found.map((m) => `${m.line}: ${m.message.split(":")[0]}`),
      [
        "3: local is exported but only src/x/a.ts uses it",
        "4: dead is exported and used nowhere",
        "5: Shape is exported and used nowhere",
      ],
    );
    // b is used through src/index.ts, the library's surface; index.ts itself is not checked.
    assert.deepEqual(lint("", join(repo, "src", "x", "b.ts"), "no-unused-export", options({})), []);
    assert.deepEqual(
      lint(a, file, "no-unused-export", options({ "src/x/a.ts": ["dead", "local", "Shape"] })),
      [],
    );
    const stale = lint(
      a,
      file,
      "no-unused-export",
      options({ "src/x/a.ts": ["dead", "local", "Shape", "used"] }),
    );
    assert.equal(stale.length, 1);
    assert.match(stale[0]!.message, /lists used of src\/x\/a\.ts .* used or gone now: remove the entry/);
  } finally {
    rmSync(repo, { recursive: true, force: true });
  }
});

test("the repository's ESLint config runs the guards on src/", async () => {
  const eslint = new ESLint({ cwd: REPO });
  const config = (await eslint.calculateConfigForFile(join(REPO, "src", "report", "json.ts"))) as {
    rules: Record<string, unknown>;
  };
  for (const rule of [
    "gpuprep/layers",
    "gpuprep/function-limits",
    "gpuprep/no-import-cycle",
    "gpuprep/no-unused-export",
  ])
    assert.deepEqual(config.rules[rule], [2], rule);
  assert.deepEqual(config.rules["@typescript-eslint/no-floating-promises"]?.toString().slice(0, 1), "2");
});
