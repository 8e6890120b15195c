/**
 * The envelope of this process's documents: the shared contract (src/json-envelope.ts) stamped
 * with the overlay the knowledge base was loaded with, so every answer that may depend on it says so.
 */
import { knowledgeBaseOverlay } from "../kb/overlay-switch.js";
import { makeEnvelope, type Envelope } from "../json-envelope.js";

export type { Envelope } from "../json-envelope.js";

export function envelope(schema: string, schemaVersion: number): Envelope {
  return makeEnvelope(schema, schemaVersion, knowledgeBaseOverlay());
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
