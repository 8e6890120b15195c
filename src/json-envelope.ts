/**
 * The one JSON contract: every `--json` document, every saved report and the Facts snapshot
 * starts with `schema`, `schemaVersion` and `tool`, so a script can tell what it holds and refuse
 * a version it does not know. It lives at the root (below every layer) because validate and facts
 * build documents too and may not import src/report; it imports nothing heavy, so the CLI's start
 * does not pay for it (the zod form, for the shipped JSON Schemas, is json-envelope-schema.ts).
 * Bump a document's version on any incompatible change to its fields (docs/json.md).
 */
import { TOOL_VERSION } from "./version.js";

export interface Tool {
  name: "gpuprep";
  version: string;
}

/** The knowledge-base overlay (`gpuprep kb update`) a document's answers were given with. */
export interface OverlayInUse {
  path: string;
  fetchedAt: string;
  indexUrl: string;
  /** Torch build rows it holds (known builds gain Pythons, unknown ones are added). */
  torchBuilds: number;
}

export interface Envelope {
  /** "gpuprep.doctor", "gpuprep.scan", ... */
  schema: string;
  schemaVersion: number;
  tool: Tool;
  /** Present when the knowledge base had the user's overlay merged in (`gpuprep kb update`). */
  kbOverlay?: OverlayInUse;
}

function toolStamp(): Tool {
  return { name: "gpuprep", version: TOOL_VERSION };
}

/** The envelope of one document; `overlay` is what the knowledge base was loaded with, if any. */
export function makeEnvelope<Id extends string, Version extends number>(
  schema: Id,
  schemaVersion: Version,
  overlay: OverlayInUse | null,
): Envelope & { schema: Id; schemaVersion: Version } {
  return { schema, schemaVersion, tool: toolStamp(), ...(overlay ? { kbOverlay: overlay } : {}) };
}
