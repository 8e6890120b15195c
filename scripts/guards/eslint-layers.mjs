/**
 * ESLint's view of the layering (scripts/guards/layers.mjs, the map test/layering.test.ts checks
 * too): an import under src/ that crosses into a folder its layer may not import from, or a
 * child_process import outside src/transports, is reported where it is written, in the editor and
 * in `npm run lint`. The layering test stays the complete check (the spawn helpers too).
 */
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { ALLOWED, CHILD_PROCESS_ALLOWED, layerOf, mayImport } from "./layers.mjs";

const SRC = fileURLToPath(new URL("../../src/", import.meta.url));

const layersRule = {
  meta: {
    type: "problem",
    docs: {
      description: "imports under src/ follow the layering of docs/DESIGN.md (scripts/guards/layers.mjs)",
    },
    messages: {
      edge: "{{from}} may not import from {{to}} (docs/DESIGN.md layering; scripts/guards/layers.mjs lists what {{from}} may import)",
      unknown: "folder {{from}} has no entry in scripts/guards/layers.mjs; add one",
      childProcess: "only src/transports starts processes; ask a Transport instead of importing {{source}}",
    },
    schema: [],
  },
  create(context) {
    const file = context.filename;
    if (!file.startsWith(SRC) || file.endsWith(".test.ts")) return {};
    const from = layerOf(SRC, file);
    const check = (node) => {
      const source = node.source;
      if (!source || source.type !== "Literal" || typeof source.value !== "string") return;
      const specifier = source.value;
      if (/^(node:)?child_process$/.test(specifier)) {
        if (!CHILD_PROCESS_ALLOWED.includes(from))
          context.report({ node: source, messageId: "childProcess", data: { source: specifier } });
        return;
      }
      if (!specifier.startsWith(".")) return;
      if (ALLOWED[from] === undefined)
        return context.report({ node: source, messageId: "unknown", data: { from } });
      const to = layerOf(SRC, resolve(dirname(file), specifier));
      if (!mayImport(from, to)) context.report({ node: source, messageId: "edge", data: { from, to } });
    };
    return {
      ImportDeclaration: check,
      ExportNamedDeclaration: check,
      ExportAllDeclaration: check,
      ImportExpression: check,
    };
  },
};

export default { meta: { name: "gpuprep-layers" }, rules: { layers: layersRule } };
