/**
 * The one JSON contract, as data: every `--json` document, every saved report and the Facts
 * snapshot starts with `schema`, `schemaVersion` and `tool`, so a script can tell what it holds
 * and refuse a version it does not know. It lives at the root (below every layer) because
 * validate and facts build documents too and may not import src/report. Bump a document's
 * version on any incompatible change to its fields (docs/json.md).
 */
import { z } from "zod";
import { TOOL_VERSION } from "./version.js";

export const ToolSchema = z.object({ name: z.literal("gpuprep"), version: z.string() });
export type Tool = z.infer<typeof ToolSchema>;

/** The knowledge-base overlay (`gpuprep kb update`) a document's answers were given with. */
export const OverlayInUseSchema = z.object({
  path: z.string(),
  fetchedAt: z.string(),
  indexUrl: z.string(),
  /** Torch build rows it holds (known builds gain Pythons, unknown ones are added). */
  torchBuilds: z.number().int(),
});
export type OverlayInUse = z.infer<typeof OverlayInUseSchema>;

/** The envelope's fields for one document id and version: what each JSON Schema starts with. */
export function envelopeShape<Id extends string, Version extends number>(schema: Id, schemaVersion: Version) {
  return {
    schema: z.literal(schema),
    schemaVersion: z.literal(schemaVersion),
    tool: ToolSchema,
    /** Present when the knowledge base had the user's overlay merged in. */
    kbOverlay: OverlayInUseSchema.optional(),
  };
}

export interface Envelope {
  /** "gpuprep.doctor", "gpuprep.scan", ... */
  schema: string;
  schemaVersion: number;
  tool: Tool;
  /** Present when the knowledge base had the user's overlay merged in (`gpuprep kb update`). */
  kbOverlay?: OverlayInUse;
}

export function toolStamp(): Tool {
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
