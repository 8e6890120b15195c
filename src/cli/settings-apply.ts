/**
 * A project's settings as flag defaults. Each flag that a setting may stand for says so in its
 * command's option table (`setting`), so which settings a command uses is declared next to the
 * flag and shown in its help. A flag given on the command line always wins; -v says, for every
 * flag a setting touched, where its value came from.
 */
import { UserError } from "../errors.js";
import { logVerbose, verboseEnabled } from "../util/console-status.js";
import type { SettingKey } from "../settings/schema.js";
import type { ProjectSettings, SettingValue } from "../settings/load.js";

/** How one flag takes a setting. */
export interface SettingUse {
  key: SettingKey;
  /** Any of these flags given, the setting is not used: they name or gather another machine. */
  unless?: readonly string[];
  /** Used only when one of these flags has a value (a driver belongs to a named target). */
  onlyWith?: readonly string[];
  /** No default: only the flag given without a value takes the setting (doctor's bare --target). */
  bare?: boolean;
}

interface FlagWithSetting {
  type: "string" | "boolean";
  multiple?: boolean;
  setting?: SettingUse;
}

type Values = Record<string, unknown>;

/**
 * `--FLAG` with no value after it, for flags whose setting is taken that way: removed from argv (so
 * parseArgs does not refuse it) and returned, to be filled in from the settings.
 */
export function takeBareFlags(
  argv: readonly string[],
  options: Readonly<Record<string, FlagWithSetting>>,
): { argv: string[]; bare: string[] } {
  const out = [...argv];
  const bare: string[] = [];
  for (const [name, option] of Object.entries(options)) {
    if (!option.setting?.bare) continue;
    const end = out.includes("--") ? out.indexOf("--") : out.length;
    const at = out.indexOf(`--${name}`);
    if (at < 0 || at >= end) continue;
    const next = out[at + 1];
    if (next === undefined || next === "--" || next.startsWith("-")) {
      out.splice(at, 1);
      bare.push(name);
    }
  }
  return { argv: out, bare };
}

/** The flags whose setting could apply now: not given, not excluded, and (if bare-only) given bare. */
function candidates(
  options: Readonly<Record<string, FlagWithSetting>>,
  values: Values,
  bare: readonly string[],
) {
  return Object.entries(options).filter(
    ([name, option]) =>
      option.setting !== undefined &&
      values[name] === undefined &&
      !(option.setting.unless ?? []).some((flag) => values[flag] !== undefined) &&
      (!option.setting.bare || bare.includes(name)),
  ) as [string, FlagWithSetting & { setting: SettingUse }][];
}

function asFlagValue(option: FlagWithSetting, value: SettingValue): unknown {
  if (option.multiple) return Array.isArray(value) ? value : [value];
  return value;
}

function shown(value: unknown): string {
  return Array.isArray(value) ? value.join(",") : String(value);
}

/**
 * Fills in `values` (parsed flags) from the project's settings in `dir`. Loads nothing when no
 * flag could take a setting (doctor on this machine reads no settings file).
 */
export async function applySettings(
  command: string,
  options: Readonly<Record<string, FlagWithSetting>>,
  values: Values,
  bare: readonly string[],
  dir: string,
): Promise<Map<string, string>> {
  const open = candidates(options, values, bare);
  const overridden = Object.entries(options).filter(([name, o]) => o.setting && values[name] !== undefined);
  const fromSettings = new Map<string, string>();
  if (open.length === 0 && !(verboseEnabled() && overridden.length > 0)) return fromSettings;
  const { loadSettings } = await import("../settings/load.js");
  const settings = loadSettings(dir);
  for (const note of settings.notes) logVerbose(`settings: ${note}`);
  if (settings.source) logVerbose(`settings: read ${settings.source} in ${dir}`);
  for (const [name, option] of open.filter(([, o]) => !o.setting.onlyWith))
    take(name, option, settings, values, fromSettings);
  requireBareValues(command, bare, options, settings, values);
  for (const [name, option] of open.filter(([, o]) => o.setting.onlyWith)) {
    const value = settings.values[option.setting.key];
    if (value === undefined) continue;
    if (option.setting.onlyWith!.some((flag) => values[flag] !== undefined))
      take(name, option, settings, values, fromSettings);
    else
      logVerbose(
        `settings: ${option.setting.key} = ${shown(value)} not used: it goes with --${option.setting.onlyWith!.join("/--")}, and there is none`,
      );
  }
  for (const [name, option] of overridden) {
    const value = settings.values[option.setting!.key];
    if (value !== undefined)
      logVerbose(
        `--${name} ${shown(values[name])}: from the command line, over ${option.setting!.key} = ${shown(value)} in ${settings.source}`,
      );
  }
  return fromSettings;
}

function take(
  name: string,
  option: FlagWithSetting & { setting: SettingUse },
  settings: ProjectSettings,
  values: Values,
  fromSettings: Map<string, string>,
): void {
  const value = settings.values[option.setting.key];
  if (value === undefined) return;
  values[name] = asFlagValue(option, value);
  fromSettings.set(name, `${settings.source}'s ${option.setting.key}`);
  logVerbose(`--${name} ${shown(values[name])}: from ${option.setting.key} in ${settings.source}`);
}

function requireBareValues(
  command: string,
  bare: readonly string[],
  options: Readonly<Record<string, FlagWithSetting>>,
  settings: ProjectSettings,
  values: Values,
): void {
  for (const name of bare) {
    if (values[name] !== undefined) continue;
    const key = options[name]!.setting!.key;
    const where = settings.source ? `${settings.source} has no ${key}` : "the project has no settings";
    throw new UserError(
      `${command}: --${name} without a value takes the project's ${key} setting, and ${where}`,
      `give --${name} NAME, or set ${key} under [tool.gpuprep] in pyproject.toml (or in gpuprep.toml)`,
    );
  }
}

/** A command's error about a flag whose value came from the settings says so in its hint. */
export function withSettingsOrigin(error: unknown, fromSettings: ReadonlyMap<string, string>): unknown {
  if (!(error instanceof UserError) || fromSettings.size === 0) return error;
  const named = [...fromSettings].filter(([flag]) => new RegExp(`--${flag}\\b`).test(error.message));
  if (named.length === 0) return error;
  const origin = named.map(([flag, where]) => `--${flag} is ${where}`).join("; ");
  return new UserError(error.message, `${origin}; ${error.hint ?? "fix the setting"}`);
}
