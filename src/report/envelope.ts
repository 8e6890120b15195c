/**
 * The one JSON contract: every `--json` document (and every saved report) starts with `schema`,
 * `schemaVersion` and `tool`, so a script can tell what it holds and refuse a version it does not
 * know. Bump a document's version on any incompatible change to its fields.
 */
import { TOOL_VERSION } from "../version.js";
import { knowledgeBaseOverlay, type OverlayInUse } from "../kb/overlay-switch.js";

export interface Envelope {
  /** "gpuprep.doctor", "gpuprep.scan", ... */
  schema: string;
  schemaVersion: number;
  tool: { name: "gpuprep"; version: string };
  /** Present when the knowledge base had the user's overlay merged in (`gpuprep kb update`). */
  kbOverlay?: OverlayInUse;
}

export function envelope(schema: string, schemaVersion: number): Envelope {
  const overlay = knowledgeBaseOverlay();
  return {
    schema,
    schemaVersion,
    tool: { name: "gpuprep", version: TOOL_VERSION },
    ...(overlay ? { kbOverlay: overlay } : {}),
  };
}

/** The envelope first, then the document's own fields. */
export function renderJsonDocument<T extends object>(schema: string, schemaVersion: number, body: T): string {
  return renderJson({ ...envelope(schema, schemaVersion), ...body });
}

/**
 * Every --json document's text: two-space indentation and a final newline, in one place. For a
 * document that already carries its envelope (validate's report, which --from reads back).
 */
export function renderJson(document: object): string {
  return JSON.stringify(document, null, 2) + "\n";
}
