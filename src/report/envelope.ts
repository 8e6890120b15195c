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

/** The envelope first, then the document's own fields; two-space indentation everywhere. */
export function renderJsonDocument<T extends object>(schema: string, schemaVersion: number, body: T): string {
  return JSON.stringify({ ...envelope(schema, schemaVersion), ...body }, null, 2) + "\n";
}
