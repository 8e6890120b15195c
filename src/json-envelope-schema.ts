/** The envelope of json-envelope.ts as zod: what every shipped JSON Schema and the Facts schema start with. */
import { z } from "zod";
import type { OverlayInUse, Tool } from "./json-envelope.js";
import type { Same } from "./util/same-type.js";

const ToolSchema = z.object({ name: z.literal("gpuprep"), version: z.string() });

const OverlayInUseSchema = z.object({
  path: z.string(),
  fetchedAt: z.string(),
  indexUrl: z.string(),
  torchBuilds: z.number().int(),
});

/** The envelope's fields for one document id and version. */
export function envelopeShape<Id extends string, Version extends number>(schema: Id, schemaVersion: Version) {
  return {
    schema: z.literal(schema),
    schemaVersion: z.literal(schemaVersion),
    tool: ToolSchema,
    /** Present when the knowledge base had the user's overlay merged in. */
    kbOverlay: OverlayInUseSchema.optional(),
  };
}

const agree: [
  Same<z.infer<typeof ToolSchema>, Tool>,
  Same<z.infer<typeof OverlayInUseSchema>, OverlayInUse>,
] = [true, true];
void agree;
