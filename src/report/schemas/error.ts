/** The error document: under --json a failure is also one JSON line on stderr, beside the message. */
import { z } from "zod";
import { envelopeShape } from "../../json-envelope-schema.js";
import { ERROR_SCHEMA_ID, ERROR_SCHEMA_VERSION } from "../document-ids.js";

export const ErrorDocumentSchema = z.object({
  ...envelopeShape(ERROR_SCHEMA_ID, ERROR_SCHEMA_VERSION),
  error: z.object({
    /** usage: bad input or an environment gpuprep cannot work in; internal: a bug in gpuprep. */
    kind: z.enum(["usage", "internal"]),
    message: z.string(),
    hint: z.string().nullable(),
  }),
  exitCode: z.number().int(),
});
