/**
 * Every JSON document gpuprep writes, with its JSON Schema: the one list that
 * scripts/generate-json-schemas.mjs writes schemas/ from, test/json-schemas.test.ts checks the
 * real output against, and docs/json.md tabulates.
 */
import { z } from "zod";
import { FACTS_SCHEMA_ID, FACTS_SCHEMA_VERSION, FactsSchema } from "../../facts/schema.js";
import { DoctorReportSchema } from "./doctor.js";
import { ScanReportSchema } from "./scan.js";
import { ValidateReportSchema } from "./validate.js";
import { MemoryReportSchema } from "./memory.js";
import { KbDocumentSchema } from "./kb.js";
import { InitReportSchema } from "./init.js";
import { FleetJobSchema, FleetReportSchema } from "./fleet.js";
import { ErrorDocumentSchema } from "./error.js";
import { SETTINGS_SCHEMA_ID, SETTINGS_SCHEMA_VERSION, settingsJsonSchema } from "../../settings/schema.js";
import { DOCTOR_REPORT_SCHEMA, DOCTOR_REPORT_VERSION } from "../json.js";
import { REPORT_SCHEMA_ID, REPORT_SCHEMA_VERSION } from "../../validate/report.js";
import { MEMORY_REPORT_SCHEMA, MEMORY_REPORT_VERSION } from "../../memory/report-types.js";
import { JOB_META_SCHEMA } from "../../fleet/job-schema.js";
import {
  ERROR_SCHEMA_ID,
  ERROR_SCHEMA_VERSION,
  FLEET_JOB_SCHEMA_VERSION,
  FLEET_SCHEMA,
  FLEET_SCHEMA_VERSION,
  INIT_SCHEMA,
  INIT_SCHEMA_VERSION,
  KB_SCHEMA,
  KB_SCHEMA_VERSION,
  SCAN_SCHEMA,
  SCAN_SCHEMA_VERSION,
} from "../document-ids.js";

interface JsonDocument {
  /** The document's `schema` field. */
  id: string;
  /** Its `schemaVersion`. */
  version: number;
  /** What prints it. */
  command: string;
  schema: z.ZodType;
}

export const JSON_DOCUMENTS: readonly JsonDocument[] = [
  {
    id: DOCTOR_REPORT_SCHEMA,
    version: DOCTOR_REPORT_VERSION,
    command: "gpuprep doctor --json",
    schema: DoctorReportSchema,
  },
  {
    id: FACTS_SCHEMA_ID,
    version: FACTS_SCHEMA_VERSION,
    command: "gpuprep doctor --save FILE (read back by --from); fleet --save DIR",
    schema: FactsSchema,
  },
  { id: SCAN_SCHEMA, version: SCAN_SCHEMA_VERSION, command: "gpuprep scan --json", schema: ScanReportSchema },
  {
    id: REPORT_SCHEMA_ID,
    version: REPORT_SCHEMA_VERSION,
    command: "gpuprep validate --json (read back by --from)",
    schema: ValidateReportSchema,
  },
  {
    id: MEMORY_REPORT_SCHEMA,
    version: MEMORY_REPORT_VERSION,
    command: "gpuprep memory --json",
    schema: MemoryReportSchema,
  },
  { id: KB_SCHEMA, version: KB_SCHEMA_VERSION, command: "gpuprep kb TOPIC --json", schema: KbDocumentSchema },
  { id: INIT_SCHEMA, version: INIT_SCHEMA_VERSION, command: "gpuprep init --json", schema: InitReportSchema },
  {
    id: FLEET_SCHEMA,
    version: FLEET_SCHEMA_VERSION,
    command: "gpuprep fleet doctor/scan/validate/collect --json",
    schema: FleetReportSchema,
  },
  {
    id: JOB_META_SCHEMA,
    version: FLEET_JOB_SCHEMA_VERSION,
    command: "gpuprep fleet doctor/scan --slurm --submit --json",
    schema: FleetJobSchema,
  },
  {
    id: ERROR_SCHEMA_ID,
    version: ERROR_SCHEMA_VERSION,
    command: "any command under --json that cannot run (one line on stderr, exit 2)",
    schema: ErrorDocumentSchema,
  },
];

/** schemas/gpuprep.doctor.v1.schema.json: the version is in the name, so a file says which version it checks. */
export function schemaFileName(document: Pick<JsonDocument, "id" | "version">): string {
  return `${document.id}.v${document.version}.schema.json`;
}

/**
 * The JSON Schema (draft 2020-12) of one document. "input" (what is shipped) leaves objects open,
 * since adding a field is a compatible change a reader must ignore; "output" closes every object
 * that the zod schema does not leave open on purpose, which the tests use so that a field printed
 * but not declared fails.
 */
export function jsonSchemaOf(
  document: JsonDocument,
  io: "input" | "output" = "input",
): Record<string, unknown> {
  const generated = z.toJSONSchema(document.schema, { io, reused: "ref", unrepresentable: "throw" });
  const { $schema, ...rest } = generated;
  return {
    $schema,
    $id: `urn:gpuprep:schema:${document.id}:v${document.version}`,
    title: `${document.id} version ${document.version}`,
    description: `What \`${document.command}\` prints. Generated from src/report/schemas by scripts/generate-json-schemas.mjs; see docs/json.md.`,
    ...rest,
  };
}

/**
 * Every shipped file's name and text, as the generator writes them: the documents gpuprep prints,
 * and the settings it reads ([tool.gpuprep] / gpuprep.toml), for editors that check TOML.
 */
export function renderSchemaFiles(): Map<string, string> {
  const files = new Map(
    JSON_DOCUMENTS.map((document) => [
      schemaFileName(document),
      JSON.stringify(jsonSchemaOf(document), null, 2) + "\n",
    ]),
  );
  files.set(
    schemaFileName({ id: SETTINGS_SCHEMA_ID, version: SETTINGS_SCHEMA_VERSION }),
    JSON.stringify(settingsJsonSchema(), null, 2) + "\n",
  );
  return files;
}
