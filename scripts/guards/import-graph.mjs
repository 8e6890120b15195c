/**
 * The import graph of a checkout, read with the TypeScript parser (no type checker, so it takes
 * seconds): which file imports which names from which file. Two guards are built on it
 * (issue 23, "Done when"): no import circle among the sources under src/ (eslint-cycles.mjs), and
 * no export that no other file uses (unused-exports.mjs): each module's exports are read for it. madge
 * answers the first question; this is the same reading without another dependency.
 */
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import ts from "typescript";

/** Every .ts and .mjs file under `dir` (declaration files and fixtures aside), as absolute paths. */
export function moduleFiles(dir, out = []) {
  if (!existsSync(dir)) return out;
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) {
      if (name !== "node_modules" && name !== "fixtures") moduleFiles(path, out);
    } else if ((name.endsWith(".ts") && !name.endsWith(".d.ts")) || name.endsWith(".mjs")) out.push(path);
  }
  return out;
}

export const isTestFile = (file) => file.endsWith(".test.ts");

/**
 * The .ts file a relative specifier names (`./x.js` is `./x.ts`; a script's `../dist/src/x.js` is
 * `src/x.ts`, the file it was built from), or undefined (JSON, Python, a package).
 */
function resolveSpecifier(fromFile, specifier, repo) {
  if (!specifier.startsWith(".")) return undefined;
  let target = resolve(dirname(fromFile), specifier);
  const built = join(repo, "dist") + "/";
  if (target.startsWith(built)) target = join(repo, target.slice(built.length));
  for (const candidate of [target.replace(/\.js$/, ".ts"), `${target}.ts`, join(target, "index.ts")])
    if (candidate.endsWith(".ts") && existsSync(candidate)) return candidate;
  return undefined;
}

const hasModifier = (node, kind) => (ts.getModifiers?.(node) ?? []).some((m) => m.kind === kind);

/** The names a top-level statement declares and exports, with whether each is a type. */
function declaredExports(statement) {
  if (!hasModifier(statement, ts.SyntaxKind.ExportKeyword)) return [];
  if (ts.isVariableStatement(statement))
    return statement.declarationList.declarations.flatMap((d) =>
      ts.isIdentifier(d.name) ? [{ name: d.name.text, type: false }] : [],
    );
  const type = ts.isInterfaceDeclaration(statement) || ts.isTypeAliasDeclaration(statement);
  if (hasModifier(statement, ts.SyntaxKind.DefaultKeyword)) return [{ name: "default", type }];
  return statement.name && ts.isIdentifier(statement.name) ? [{ name: statement.name.text, type }] : [];
}

/**
 * What `(await import("x")).name` takes from a dynamic import: the name, or "*" when it keeps the
 * module (`import("x").then(...)` included).
 */
function dynamicImportName(call) {
  let node = call.parent;
  let awaited = false;
  while (node && (ts.isAwaitExpression(node) || ts.isParenthesizedExpression(node))) {
    awaited ||= ts.isAwaitExpression(node);
    node = node.parent;
  }
  return awaited && node && ts.isPropertyAccessExpression(node) ? node.name.text : "*";
}

/**
 * One file's imports (`{ target, names, typeOnly }`, names "*" for a namespace or an unknown use),
 * re-exports and own exports.
 */
export function readModule(file, repo) {
  const text = readFileSync(file, "utf8");
  const kind = file.endsWith(".mjs") ? ts.ScriptKind.JS : ts.ScriptKind.TS;
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.ES2022, true, kind);
  const imports = [];
  const exports = [];
  const add = (specifier, names, typeOnly, reexports = undefined) => {
    const target = resolveSpecifier(file, specifier, repo);
    if (target) imports.push({ target, names, typeOnly, ...(reexports ? { reexports } : {}) });
  };
  for (const statement of source.statements) {
    exports.push(...declaredExports(statement));
    if (ts.isImportDeclaration(statement)) {
      const clause = statement.importClause;
      const bindings = clause?.namedBindings;
      const names = !clause
        ? [] // `import "./x.js"` runs the module for its effects and takes no name
        : bindings && ts.isNamespaceImport(bindings)
          ? ["*"]
          : [
              ...(clause.name ? ["default"] : []),
              ...(bindings?.elements ?? []).map((e) => (e.propertyName ?? e.name).text),
            ];
      add(statement.moduleSpecifier.text, names, clause?.isTypeOnly ?? false);
    } else if (ts.isExportDeclaration(statement)) {
      const clause = statement.exportClause;
      if (statement.moduleSpecifier) {
        // `export { a as b } from "./f.js"` hands f's `a` on as `b`: [["b", "a"]]; `export *` all of f.
        const pairs =
          clause && ts.isNamedExports(clause)
            ? clause.elements.map((e) => [e.name.text, (e.propertyName ?? e.name).text])
            : [["*", "*"]];
        add(
          statement.moduleSpecifier.text,
          pairs.map(([, from]) => from),
          statement.isTypeOnly,
          pairs,
        );
      }
      if (clause && ts.isNamedExports(clause))
        exports.push(
          ...clause.elements.map((e) => ({
            name: e.name.text,
            type: statement.isTypeOnly,
            reexport: !!statement.moduleSpecifier,
          })),
        );
    } else if (ts.isExportAssignment(statement)) exports.push({ name: "default", type: false });
  }
  const visit = (node) => {
    if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) {
      const [argument] = node.arguments;
      if (argument && ts.isStringLiteral(argument)) add(argument.text, [dynamicImportName(node)], false);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return { file, text, imports, exports };
}

/** The modules of `dirs` under `repo`, read once. */
export function readModules(repo, dirs = ["src", "test", "bench", "scripts"]) {
  return dirs.flatMap((dir) => moduleFiles(join(repo, dir))).map((file) => readModule(file, repo));
}

/**
 * The import circles among `files` (strongly connected components of more than one file, or a
 * file importing itself), each as the repository-relative paths in one circle, sorted. Type-only
 * imports count: a circle of types is still two modules that cannot be read one without the other.
 */
export function importCircles(modules, repo, include = () => true) {
  const nodes = modules.filter((m) => include(m.file));
  const edges = new Map(
    nodes.map((m) => [m.file, [...new Set(m.imports.map((i) => i.target))].filter((t) => include(t))]),
  );
  // Tarjan's algorithm, iterative so a deep chain cannot overflow the stack.
  const index = new Map();
  const low = new Map();
  const onStack = new Set();
  const stack = [];
  const circles = [];
  let counter = 0;
  for (const start of edges.keys()) {
    if (index.has(start)) continue;
    const work = [[start, 0]];
    index.set(start, counter);
    low.set(start, counter++);
    stack.push(start);
    onStack.add(start);
    while (work.length) {
      const frame = work[work.length - 1];
      const [node, i] = frame;
      const next = (edges.get(node) ?? [])[i];
      if (next !== undefined) {
        frame[1]++;
        if (!index.has(next)) {
          index.set(next, counter);
          low.set(next, counter++);
          stack.push(next);
          onStack.add(next);
          work.push([next, 0]);
        } else if (onStack.has(next)) low.set(node, Math.min(low.get(node), index.get(next)));
        continue;
      }
      work.pop();
      if (work.length) {
        const parent = work[work.length - 1][0];
        low.set(parent, Math.min(low.get(parent), low.get(node)));
      }
      if (low.get(node) !== index.get(node)) continue;
      const component = [];
      let member;
      do {
        member = stack.pop();
        onStack.delete(member);
        component.push(member);
      } while (member !== node);
      if (component.length > 1 || (edges.get(node) ?? []).includes(node))
        circles.push(component.map((f) => relative(repo, f)).sort());
    }
  }
  return circles.sort((a, b) => a[0].localeCompare(b[0]));
}
