import js from "@eslint/js";
import tseslint from "typescript-eslint";
import layers from "./scripts/guards/eslint-layers.mjs";
import { plugin as functionLimits } from "./scripts/guards/function-limits.mjs";
import importCycles from "./scripts/guards/eslint-cycles.mjs";
import { plugin as unusedExports } from "./scripts/guards/unused-exports.mjs";

/**
 * The guards of CONTRIBUTING.md: typed lint, the layering map, the function-size ratchet, no import
 * circle, no export that no other file uses.
 */
export default tseslint.config(
  {
    ignores: [
      "dist/",
      "node_modules/",
      "test/fixtures/",
      "coverage/",
      ".device-node/",
      ".memory-device/",
      ".dev-*/",
    ],
  },
  js.configs.recommended,
  // Type-aware: the rules that need the type checker (floating promises, `any` leaking out of
  // JSON.parse, assertions that change nothing) read the project's tsconfig.json.
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: new URL(".", import.meta.url).pathname },
    },
    rules: {
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_" }],
      "no-console": "off",
      // node:test's test() and describe() return promises the runner awaits itself.
      "@typescript-eslint/no-floating-promises": [
        "error",
        {
          allowForKnownSafeCalls: [
            { from: "package", package: "node:test", name: ["test", "it", "describe", "suite"] },
          ],
        },
      ],
      // Off: the byte sources (ByteSource.read in src/fatbin, src/remote) and the Transport methods
      // implement async interfaces with bodies that happen not to await; `async` keeps a throw in
      // them (ScanError, MissingBytes) a rejection, which the callers' catch handlers rely on.
      // Functions that were async for no reason were made plain (src/cli/kb.ts).
      "@typescript-eslint/require-await": "off",
    },
  },
  {
    // Tests read the --json documents (and fixtures) as JSON.parse gives them, then assert on
    // their fields: a field of the wrong shape fails the assertion that reads it, and
    // test/json-schemas.test.ts validates every document against its schema (schemas/). Typing
    // each of those reads would restate the schemas in the tests. The sources keep these rules:
    // their JSON is parsed with zod or narrowed before use.
    files: ["test/**/*.ts", "src/**/*.test.ts", "bench/**/*.ts"],
    rules: {
      "@typescript-eslint/no-unsafe-assignment": "off",
      "@typescript-eslint/no-unsafe-member-access": "off",
      "@typescript-eslint/no-unsafe-call": "off",
      "@typescript-eslint/no-unsafe-argument": "off",
      "@typescript-eslint/no-unsafe-return": "off",
    },
  },
  {
    // Scripts and benchmarks in plain JavaScript are outside tsconfig.json: no type information.
    files: ["**/*.mjs", "**/*.js"],
    ...tseslint.configs.disableTypeChecked,
    languageOptions: {
      ...tseslint.configs.disableTypeChecked.languageOptions,
      globals: {
        process: "readonly",
        console: "readonly",
        URL: "readonly",
        Buffer: "readonly",
        performance: "readonly",
      },
    },
  },
  {
    // The layering of docs/DESIGN.md (scripts/guards/layers.mjs, the map test/layering.test.ts
    // reads too), the size limits with their ratchet (eslint-ratchet.json), the import-circle
    // check (scripts/guards/import-graph.mjs) and the unused-export check on the same graph
    // (scripts/guards/unused-exports.mjs, its list in eslint-ratchet.json too), on the sources. Tests are left out of the size
    // limits: a test's body is its table of cases, read top to bottom.
    files: ["src/**/*.ts"],
    ignores: ["src/**/*.test.ts"],
    plugins: {
      gpuprep: {
        rules: { ...layers.rules, ...functionLimits.rules, ...importCycles.rules, ...unusedExports.rules },
      },
    },
    rules: {
      "gpuprep/layers": "error",
      "gpuprep/function-limits": "error",
      "gpuprep/no-import-cycle": "error",
      "gpuprep/no-unused-export": "error",
    },
  },
);
