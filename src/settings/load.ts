/**
 * Reading a project's settings: gpuprep.toml in the project directory, else the `[tool.gpuprep]`
 * table of its pyproject.toml. Only that directory is read (no walk up to parents), so what applies
 * is what `ls` shows. A setting that does not check out is refused, naming the file and the key:
 * a typo must not silently plan for the wrong machine.
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import { parse as parseToml, TomlError } from "smol-toml";
import type { z } from "zod";
import { UserError } from "../errors.js";
import { docsUrl } from "../docs-url.js";
import { READ_LIMITS, readTextFile } from "../util/safe-read.js";
import {
  PYPROJECT_TABLE,
  SETTINGS_FILE,
  SETTING_KEYS,
  SettingsSchema,
  settingDescription,
  type SettingKey,
} from "./schema.js";

/** A setting's value as the flags take it: a driver given as a TOML integer (580) is the text "580". */
export type SettingValue = string | boolean | string[];

export interface ProjectSettings {
  values: Partial<Record<SettingKey, SettingValue>>;
  /** Where they were read: "gpuprep.toml", "pyproject.toml [tool.gpuprep]"; null when neither has any. */
  source: string | null;
  /** What was passed over and why, for -v. */
  notes: string[];
}

const HELP = `see ${docsUrl("docs/settings.md")}`;

/** The settings that apply in `dir`: gpuprep.toml's, else pyproject.toml's [tool.gpuprep], else none. */
export function loadSettings(dir: string): ProjectSettings {
  const ownPath = join(dir, SETTINGS_FILE);
  const pyprojectPath = join(dir, "pyproject.toml");
  const notes: string[] = [];
  const pyprojectTable = existsSync(pyprojectPath) ? pyprojectSettings(pyprojectPath, notes) : undefined;
  if (existsSync(ownPath)) {
    if (pyprojectTable !== undefined)
      notes.push(`pyproject.toml's [${PYPROJECT_TABLE}] is not read: ${SETTINGS_FILE} is there, and it wins`);
    return { values: checked(readToml(ownPath, SETTINGS_FILE), SETTINGS_FILE), source: SETTINGS_FILE, notes };
  }
  if (pyprojectTable === undefined) return { values: {}, source: null, notes };
  const source = `pyproject.toml [${PYPROJECT_TABLE}]`;
  return { values: checked(pyprojectTable, source), source, notes };
}

/**
 * The [tool.gpuprep] table, or undefined when there is none. A pyproject.toml that is no valid TOML
 * is left to the commands that read the project (doctor reports it as a finding), not refused here.
 */
function pyprojectSettings(path: string, notes: string[]): unknown {
  let doc: Record<string, unknown>;
  try {
    doc = readToml(path, "pyproject.toml");
  } catch (error) {
    if (!(error instanceof UserError)) throw error;
    notes.push(`pyproject.toml is not read for settings: ${error.message}`);
    return undefined;
  }
  const tool = doc["tool"];
  if (typeof tool !== "object" || tool === null) return undefined;
  return (tool as Record<string, unknown>)["gpuprep"];
}

function readToml(path: string, label: string): Record<string, unknown> {
  const text = readTextFile(path, { maxBytes: READ_LIMITS.manifest, hint: `check ${label}` });
  try {
    // Plain objects: smol-toml builds null-prototype tables.
    return JSON.parse(JSON.stringify(parseToml(text))) as Record<string, unknown>;
  } catch (error) {
    if (!(error instanceof TomlError)) throw error;
    const reason = error.message.split("\n")[0]?.replace(/^Invalid TOML document: /, "") ?? "invalid TOML";
    throw new UserError(
      `${label}:${error.line}: invalid TOML: ${reason}`,
      `fix line ${error.line} of ${label}`,
    );
  }
}

/** The table checked against the schema, each value in the form its flag takes. */
function checked(table: unknown, source: string): ProjectSettings["values"] {
  if (typeof table !== "object" || table === null || Array.isArray(table))
    throw new UserError(`${source} is not a table of settings`, HELP);
  const result = SettingsSchema.safeParse(table);
  if (!result.success) throw settingError(result.error.issues[0]!, source, table as Record<string, unknown>);
  const values: ProjectSettings["values"] = {};
  for (const [key, value] of Object.entries(result.data) as [SettingKey, unknown][]) {
    values[key] = typeof value === "number" ? String(value) : (value as SettingValue);
  }
  return values;
}

/** One line naming the file, the key and the value; the hint says what the key holds. */
function settingError(issue: z.core.$ZodIssue, source: string, table: Record<string, unknown>): UserError {
  if (issue.code === "unrecognized_keys") {
    const key = issue.keys[0] ?? "";
    return new UserError(
      `${source}: unknown setting "${key}"`,
      `the settings are ${SETTING_KEYS.join(", ")}; ${HELP}`,
    );
  }
  const key = String(issue.path[0] ?? "");
  const value = JSON.stringify(table[key]) ?? "";
  const shown = value.length <= 60 ? ` = ${value}` : "";
  const expected =
    issue.code === "invalid_value" ? `one of ${issue.values.map(String).join(", ")}` : issue.message;
  const what = settingDescription(key as SettingKey);
  return new UserError(
    `${source}: ${key}${shown} is not valid: ${expected}`,
    what ? `${key}: ${what}` : HELP,
  );
}
