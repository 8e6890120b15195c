/**
 * What a project may set once instead of repeating flags: `[tool.gpuprep]` in pyproject.toml, or
 * gpuprep.toml beside pixi.toml / environment.yml. One zod schema is both the check of what is
 * read and the JSON Schema shipped for editors (schemas/gpuprep.settings.v1.schema.json).
 * Keys are written as the flags are (kebab-case), as uv's `[tool.uv]` does.
 */
import { z } from "zod";

export const SETTINGS_SCHEMA_ID = "gpuprep.settings";
export const SETTINGS_SCHEMA_VERSION = 1;

/** The file of its own, beside any manifest; it wins over pyproject.toml's table, as uv.toml does over [tool.uv]. */
export const SETTINGS_FILE = "gpuprep.toml";
export const PYPROJECT_TABLE = "tool.gpuprep";

const driverText = z
  .string()
  .regex(/^\d+(\.\d+){0,2}$/, "a driver version such as 580.95.05, or a branch such as 580");

export const SettingsSchema = z
  .strictObject({
    target: z
      .string()
      .min(1)
      .describe(
        "The machine the project is for, as --target names it: a system (dgx-spark, jetson-thor) or a GPU (h100, rtx-5090). init plans for it, memory takes its GPU's memory, and `doctor --target` judges the project for it.",
      ),
    driver: z
      .union([driverText, z.int().positive()])
      .describe(
        'The target\'s NVIDIA driver (--driver): "580.95.05", or a branch, 580. Used only with a target.',
      ),
    arch: z.enum(["x86_64", "aarch64"]).describe("The target's CPU (--arch). Used only with a target."),
    strategy: z
      .enum(["container", "native", "auto"])
      .describe(
        "init --strategy: an NGC container, a native uv venv, or auto (the one that keeps every pin).",
      ),
    python: z
      .string()
      .regex(/^3\.\d+(\.\d+)?$/, "a Python version such as 3.12")
      .describe("init --python: the Python of the native venv."),
    "build-from-source": z
      .array(z.string().regex(/^[A-Za-z0-9]([A-Za-z0-9._-]*[A-Za-z0-9])?$/, "a package name as on PyPI"), {
        error: 'a list of package names, e.g. ["flash-attn"]',
      })
      .describe("init --build-from-source: extensions compiled for exactly the target GPU."),
    jupyter: z
      .boolean({ error: "true or false" })
      .describe("init --jupyter: a Jupyter service in the container setup."),
    "non-root": z
      .boolean({ error: "true or false" })
      .describe("init --non-root: run as the host user's ids instead of root."),
    volumes: z
      .array(z.string().min(1), { error: 'a list of volumes, e.g. ["/data:/data:ro"]' })
      .describe("init --volume: more volumes, each HOST:CTR[:ro|rw]."),
    "shm-size": z
      .string()
      .regex(/^\d+[bkmg]?$/i, "a size such as 16g")
      .describe("init --shm-size: a /dev/shm of this size."),
    "index-url": z
      .string()
      .min(1)
      .describe("init --index-url: a PyPI mirror (http or https, no credentials)."),
    "registry-mirror": z
      .string()
      .min(1)
      .describe(
        "init --registry-mirror: a mirror of nvcr.io to pull the NGC base image from (host[:port][/path]).",
      ),
    wheelhouse: z
      .string()
      .min(1)
      .describe("init --wheelhouse: a directory of wheels in the project (offline build)."),
  })
  .partial();

type Settings = z.infer<typeof SettingsSchema>;
export type SettingKey = keyof Settings;
export const SETTING_KEYS = Object.keys(SettingsSchema.shape) as SettingKey[];

/** What a key holds, as its schema describes it (the hint of an error about it). */
export function settingDescription(key: SettingKey): string | undefined {
  const field = SettingsSchema.shape[key];
  return field?.description ?? field?.unwrap().description;
}

/** The JSON Schema of the settings table (draft 2020-12), for editors and for docs/settings.md. */
export function settingsJsonSchema(): Record<string, unknown> {
  const { $schema, ...rest } = z.toJSONSchema(SettingsSchema, { io: "input", unrepresentable: "throw" });
  return {
    $schema,
    $id: `urn:gpuprep:schema:${SETTINGS_SCHEMA_ID}:v${SETTINGS_SCHEMA_VERSION}`,
    title: `gpuprep settings ([${PYPROJECT_TABLE}] in pyproject.toml, or ${SETTINGS_FILE}) version ${SETTINGS_SCHEMA_VERSION}`,
    description:
      "Defaults for gpuprep's flags, set once per project; a flag given on the command line wins. Generated from src/settings/schema.ts by scripts/generate-json-schemas.mjs; see docs/settings.md.",
    ...rest,
  };
}
