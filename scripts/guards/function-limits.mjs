/**
 * Function size and complexity limits with a ratchet (issue 23 item 7). ESLint's own
 * `max-lines-per-function` (60, blank and comment lines not counted) and `complexity` (15) measure
 * each function under src/; eslint-ratchet.json lists the functions that were over a limit when the
 * guard came in, each by file and qualified name with its size. The list may only shrink:
 * - a function over a limit that the list does not name is an error (split it);
 * - a listed function that grew past its entry is an error;
 * - a listed function that shrank, or is within the limits now, is an error until its entry is
 *   lowered or removed (`node scripts/guards/ratchet.mjs --shrink` does both and never adds).
 * The rule wraps the two core rules instead of copying them, so the numbers are ESLint's.
 */
import { readFileSync } from "node:fs";
import { relative } from "node:path";
import { fileURLToPath } from "node:url";
import { Linter } from "eslint";
import { builtinRules } from "eslint/use-at-your-own-risk";
import tseslint from "typescript-eslint";

export const LIMITS = { lines: 60, complexity: 15 };
export const REPO = fileURLToPath(new URL("../../", import.meta.url));
export const RATCHET_PATH = fileURLToPath(new URL("../../eslint-ratchet.json", import.meta.url));

const FUNCTION_TYPES = new Set(["FunctionDeclaration", "FunctionExpression", "ArrowFunctionExpression"]);

/** The text of a property key (`run`, `"a-b"`, `[computed]`). */
function keyText(key) {
  if (key.type === "Identifier" || key.type === "PrivateIdentifier") return key.name;
  if (key.type === "Literal") return String(key.value);
  return "[computed]";
}

/** The name a node gives to what it holds: a declared function or class, a variable, a property. */
function nameGivenBy(node) {
  switch (node.type) {
    case "FunctionDeclaration":
    case "FunctionExpression":
    case "ClassDeclaration":
    case "ClassExpression":
      return node.id?.name;
    case "VariableDeclarator":
      return node.id.type === "Identifier" ? node.id.name : undefined;
    case "Property":
    case "MethodDefinition":
    case "PropertyDefinition":
      return keyText(node.key);
    default:
      return undefined;
  }
}

/**
 * A function's name within its file: the names of what holds it, outermost first
 * (`scanCommand.run`, `KubeApi.request`, `runCommand.(anonymous)` for a callback inside
 * runCommand), stable under edits elsewhere in the file (no line numbers).
 */
function qualifiedName(fn) {
  const parts = [];
  const own = nameGivenBy(fn) ?? (fn.parent && nameGivenBy(fn.parent));
  if (own === undefined) parts.push("(anonymous)");
  for (let node = fn; node; node = node.parent) {
    const name = nameGivenBy(node);
    if (name !== undefined) parts.unshift(name);
  }
  return parts.join(".");
}

/** Every function of a file with its name, `#2`, `#3`... on the second and later of one name. */
export function functionNames(ast) {
  const names = new Map();
  const seen = new Map();
  const visit = (node) => {
    if (FUNCTION_TYPES.has(node.type)) {
      const base = qualifiedName(node);
      const count = (seen.get(base) ?? 0) + 1;
      seen.set(base, count);
      names.set(node, count === 1 ? base : `${base}#${count}`);
    }
    for (const [key, value] of Object.entries(node)) {
      if (key === "parent" || key === "loc" || key === "range" || key === "tokens" || key === "comments")
        continue;
      if (Array.isArray(value))
        for (const child of value) if (child && typeof child.type === "string") visit(child);
      if (value && typeof value.type === "string") visit(value);
    }
  };
  visit(ast);
  return names;
}

/** Both core rules' listeners, their reports turned into `onMeasure(metric, functionNode, value)`. */
function measuringListeners(context, onMeasure) {
  const wrapped = [
    ["lines", "max-lines-per-function", [{ max: LIMITS.lines, skipBlankLines: true, skipComments: true }]],
    ["complexity", "complexity", [LIMITS.complexity]],
  ].map(([metric, ruleId, options]) =>
    builtinRules.get(ruleId).create(
      Object.create(context, {
        options: { value: options },
        report: {
          value: ({ node, data }) => {
            // max-lines-per-function reports a method on its Property/MethodDefinition.
            const fn = FUNCTION_TYPES.has(node.type) ? node : node.value;
            onMeasure(metric, fn, Number(metric === "lines" ? data.lineCount : data.complexity));
          },
        },
      }),
    ),
  );
  const merged = {};
  for (const listeners of wrapped)
    for (const [event, handler] of Object.entries(listeners)) {
      const previous = merged[event];
      merged[event] = previous ? (...args) => (previous(...args), handler(...args)) : handler;
    }
  return merged;
}

/** Records each function over a limit of the file it runs on: { name: { lines?, complexity? } }. */
function measurer(onFile) {
  return {
    create(context) {
      const over = new Map();
      const listeners = measuringListeners(context, (metric, fn, value) => {
        over.set(fn, { ...over.get(fn), [metric]: value });
      });
      const exit = listeners["Program:exit"];
      return {
        ...listeners,
        "Program:exit"(node) {
          exit?.(node);
          const names = functionNames(context.sourceCode.ast);
          onFile(
            context.filename,
            Object.fromEntries([...over].map(([fn, sizes]) => [names.get(fn), sizes])),
          );
        },
      };
    },
  };
}

export function readRatchet(path = RATCHET_PATH) {
  return JSON.parse(readFileSync(path, "utf8"));
}

const METRIC_WORDS = { lines: "lines", complexity: "complexity" };

/**
 * The ESLint rule: compares what the file measures with its entries in the ratchet (option
 * `ratchet`, a path; the repository's eslint-ratchet.json by default).
 */
const functionLimitsRule = {
  meta: {
    type: "suggestion",
    docs: {
      description:
        "functions stay within 60 lines and complexity 15; eslint-ratchet.json lists the old ones and only shrinks",
    },
    messages: {
      over: "{{name}} has {{metric}} {{value}}, over the limit of {{limit}}: split it into functions of one purpose",
      grew: "{{name}} has {{metric}} {{value}}, more than the {{listed}} eslint-ratchet.json allows: the list only shrinks",
      shrank:
        "{{name}} is down to {{metric}} {{value}} (eslint-ratchet.json says {{listed}}): lower its entry (node scripts/guards/ratchet.mjs --shrink)",
      fixed:
        "{{name}} is within the {{metric}} limit of {{limit}} now: remove it from eslint-ratchet.json (node scripts/guards/ratchet.mjs --shrink)",
    },
    schema: [{ type: "object", properties: { ratchet: { type: "string" } }, additionalProperties: false }],
  },
  create(context) {
    const ratchet = readRatchet(context.options[0]?.ratchet);
    const listed = ratchet.functions[relative(REPO, context.filename)] ?? {};
    const over = new Map();
    const listeners = measuringListeners(context, (metric, fn, value) =>
      over.set(fn, { ...over.get(fn), [metric]: value }),
    );
    const exit = listeners["Program:exit"];
    return {
      ...listeners,
      "Program:exit"(program) {
        exit?.(program);
        const names = functionNames(context.sourceCode.ast);
        const measured = new Map([...over].map(([fn, sizes]) => [names.get(fn), { fn, sizes }]));
        for (const [name, { fn, sizes }] of measured)
          for (const [metric, value] of Object.entries(sizes)) {
            const allowed = listed[name]?.[metric];
            const data = {
              name,
              metric: METRIC_WORDS[metric],
              value,
              limit: LIMITS[metric],
              listed: allowed,
            };
            const loc = fn.loc.start;
            if (allowed === undefined) context.report({ loc, messageId: "over", data });
            else if (value > allowed) context.report({ loc, messageId: "grew", data });
            else if (value < allowed) context.report({ loc, messageId: "shrank", data });
          }
        for (const [name, sizes] of Object.entries(listed))
          for (const metric of Object.keys(sizes))
            if (measured.get(name)?.sizes[metric] === undefined)
              context.report({
                loc: program.loc.start,
                messageId: "fixed",
                data: { name, metric: METRIC_WORDS[metric], limit: LIMITS[metric] },
              });
      },
    };
  },
};

export const plugin = {
  meta: { name: "gpuprep-function-limits" },
  rules: { "function-limits": functionLimitsRule },
};

/**
 * What every file of `files` measures over the limits: { "src/x.ts": { name: { lines?, complexity? } } }
 * (files with none left out). Parses without types: a few seconds for src/.
 */
export function measureFiles(files, repo = REPO) {
  const result = {};
  const linter = new Linter({ configType: "flat" });
  const config = [
    {
      files: ["**/*.ts"],
      languageOptions: { parser: tseslint.parser },
      plugins: {
        measure: { rules: { sizes: measurer((file, found) => (result[relative(repo, file)] = found)) } },
      },
      rules: { "measure/sizes": "error" },
    },
  ];
  for (const file of files) {
    const messages = linter.verify(readFileSync(file, "utf8"), config, file);
    const fatal = messages.find((m) => m.fatal);
    if (fatal) throw new Error(`${file}:${fatal.line}: ${fatal.message}`);
  }
  for (const [file, found] of Object.entries(result))
    if (Object.keys(found).length === 0) delete result[file];
  return result;
}

/** Counts for a report: functions over 60 and over 100 lines, over complexity 15. */
export function countsOf(measured) {
  const all = Object.values(measured).flatMap((found) => Object.values(found));
  return {
    overLines: all.filter((s) => s.lines !== undefined).length,
    over100Lines: all.filter((s) => (s.lines ?? 0) > 100).length,
    overComplexity: all.filter((s) => s.complexity !== undefined).length,
  };
}
