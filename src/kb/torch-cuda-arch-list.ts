/**
 * How torch's extension builder reads TORCH_CUDA_ARCH_LIST (torch.utils.cpp_extension
 * ._get_cuda_arch_flags), and the arch tables of the torch versions whose source was read. Rules ask
 * this module; they hold no tables of their own.
 *
 * What the function does, in every version read: an unset or empty value means "the visible GPUs";
 * otherwise spaces become ';', each named arch ("Ampere") is replaced by its list (plain substring
 * replacement, in table order), the result is split on ';', and any entry not in
 * `supported_arches` (or that plus "+PTX") raises `ValueError: Unknown CUDA arch (X) or GPU not
 * supported`. Commas are not separators there. Entry "X.Y" builds sm_XY SASS; "+PTX" adds compute_XY.
 *
 * Sources:
 * - torch 1.13: /usr/lib/python3/dist-packages/torch/utils/cpp_extension.py of Debian's python3-torch
 *   1.13.1 (lines 1719-1800), read on this machine.
 * - torch 2.9 and later: torch/utils/cpp_extension.py of pytorch main as held by the fork
 *   maggiemoss/pytorch at commit 4b78f85938a63c12719f266324b57ffe9f3b7581 (_get_cuda_arch_flags). Its
 *   table has 11.0 where older ones had 10.1: pytorch commit 9c5601ecc316e5be548038bc24411acd7c74a032
 *   renamed Thor's arch, and torch 2.9.0 rejects "10.1" (https://github.com/pytorch/pytorch/issues/166120).
 *   Versions 2.9 to main are judged with main's table: an arch added to main after 2.9 would be missed,
 *   never invented.
 * - Other torch versions: no table was read, so only what no table accepts is judged (the form below).
 */
import { compareVersions, majorMinor } from "../util/version.js";

interface CppExtensionArchTable {
  /** Which torch versions the table is for, for messages ("1.13", "2.9 and later"). */
  torch: string;
  /** Named arches in the order torch replaces them. */
  named: readonly (readonly [string, string])[];
  supported: readonly string[];
  /** Whether the whole value "native" means the visible GPUs (main does; 1.13 rejects it). */
  acceptsNative: boolean;
  source: string;
}

const TORCH_1_13: CppExtensionArchTable = {
  torch: "1.13",
  named: [
    ["Kepler+Tesla", "3.7"],
    ["Kepler", "3.5+PTX"],
    ["Maxwell+Tegra", "5.3"],
    ["Maxwell", "5.0;5.2+PTX"],
    ["Pascal", "6.0;6.1+PTX"],
    ["Volta", "7.0+PTX"],
    ["Turing", "7.5+PTX"],
    ["Ampere", "8.0;8.6+PTX"],
  ],
  supported: ["3.5", "3.7", "5.0", "5.2", "5.3", "6.0", "6.1", "6.2", "7.0", "7.2", "7.5", "8.0", "8.6"],
  acceptsNative: false,
  source: "Debian python3-torch 1.13.1, torch/utils/cpp_extension.py lines 1740-1753",
};

const TORCH_2_9_ON: CppExtensionArchTable = {
  torch: "2.9 and later",
  named: [
    ["Kepler+Tesla", "3.7"],
    ["Kepler", "3.5+PTX"],
    ["Maxwell+Tegra", "5.3"],
    ["Maxwell", "5.0;5.2+PTX"],
    ["Pascal", "6.0;6.1+PTX"],
    ["Volta+Tegra", "7.2"],
    ["Volta", "7.0+PTX"],
    ["Turing", "7.5+PTX"],
    ["Ampere+Tegra", "8.7"],
    ["Ampere", "8.0;8.6+PTX"],
    ["Ada", "8.9+PTX"],
    ["Hopper", "9.0+PTX"],
    ["Blackwell+Tegra", "11.0"],
    ["Blackwell", "10.0;10.3;12.0;12.1+PTX"],
  ],
  supported: [
    "3.5",
    "3.7",
    "5.0",
    "5.2",
    "5.3",
    "6.0",
    "6.1",
    "6.2",
    "7.0",
    "7.2",
    "7.5",
    "8.0",
    "8.6",
    "8.7",
    "8.9",
    "9.0",
    "9.0a",
    "10.0",
    "10.0a",
    "11.0",
    "11.0a",
    "10.3",
    "10.3a",
    "12.0",
    "12.0a",
    "12.1",
    "12.1a",
  ],
  acceptsNative: true,
  source:
    "pytorch main torch/utils/cpp_extension.py (_get_cuda_arch_flags) at 4b78f85938a63c12719f266324b57ffe9f3b7581",
};

/** The newest table read: its names are expanded when the installed torch has no table here. */
export const NEWEST_CPP_EXTENSION_TABLE = TORCH_2_9_ON;

/** The table of this torch version, or null when none was read for it. */
export function cppExtensionArchTable(torchVersion: string | null): CppExtensionArchTable | null {
  if (!torchVersion) return null;
  if (majorMinor(torchVersion) === "1.13") return TORCH_1_13;
  if (compareVersions(torchVersion, "2.9") >= 0) return TORCH_2_9_ON;
  return null;
}

/** The only shape any table read has: "X.Y" or "X.Ya", optionally "+PTX". */
const ENTRY_FORM = /^\d+\.\d+a?(\+PTX)?$/;

/** Whether cpp_extension would take this entry: by the table when there is one, else by form alone. */
export function acceptedEntry(entry: string, table: CppExtensionArchTable | null): boolean {
  if (!table) return ENTRY_FORM.test(entry);
  const base = entry.endsWith("+PTX") ? entry.slice(0, -"+PTX".length) : entry;
  return table.supported.includes(base);
}

/** The entries exactly as cpp_extension splits them (empty ones included: they raise too). */
export function cppExtensionEntries(value: string, table: CppExtensionArchTable): string[] {
  let list = value.replace(/ /g, ";");
  for (const [name, archs] of table.named) list = list.split(name).join(archs);
  return list.split(";");
}

/** Whether cpp_extension treats the value as "build for the visible GPUs" rather than as a list. */
export function meansVisibleGpus(value: string, table: CppExtensionArchTable | null): boolean {
  return value === "" || (value === "native" && (table?.acceptsNative ?? true));
}

/**
 * The code targets a list asks for, read leniently (';', ',' or whitespace between entries, names
 * expanded) because other builders read the same variable: "9.0a+PTX" -> sm_90a, compute_90a;
 * "10.0f" -> sm_100f. Entries of no known shape give nothing (torch-cuda-arch-list-invalid names them).
 */
export function archListTargets(value: string, table: CppExtensionArchTable | null): string[] {
  const named = (table ?? NEWEST_CPP_EXTENSION_TABLE).named;
  let list = value;
  for (const [name, archs] of named) list = list.split(name).join(archs);
  const targets: string[] = [];
  for (const entry of list.split(/[;,\s]+/)) {
    const match = /^(\d+)\.(\d)([af]?)(\+PTX)?$/.exec(entry);
    if (!match) continue;
    const digits = `${match[1]}${match[2]}${match[3]}`;
    targets.push(`sm_${digits}`);
    if (match[4]) targets.push(`compute_${digits}`);
  }
  return targets;
}
