/**
 * torch's extension builder raises `ValueError: Unknown CUDA arch (X) or GPU not supported` for any
 * TORCH_CUDA_ARCH_LIST entry outside its own table, so every source build of an extension stops.
 * Judged with the table of the installed torch where one was read (kb/torch-cuda-arch-list.ts), else
 * only for entries that no torch accepts (wrong shape, "sm_90", commas, empty entries).
 */
import type { Rule } from "../findings/types.js";
import { ev, makeFinding } from "../findings/finding.js";
import { deviceCapabilities, envVar } from "../rule-helpers/view.js";
import { formatComputeCapability } from "../kb/compat.js";
import {
  NEWEST_CPP_EXTENSION_TABLE,
  acceptedEntry,
  cppExtensionArchTable,
  cppExtensionEntries,
  meansVisibleGpus,
} from "../kb/torch-cuda-arch-list.js";

export const torchCudaArchListInvalid: Rule = {
  id: "torch-cuda-arch-list-invalid",
  title: "TORCH_CUDA_ARCH_LIST has entries torch's extension builder rejects",
  severity: "error",
  check(facts) {
    const value = envVar(facts, "TORCH_CUDA_ARCH_LIST");
    const torchVersion = facts.python.torch?.version ?? null;
    // Without torch there is no cpp_extension to read the variable.
    if (value === undefined || torchVersion === null) return [];
    const table = cppExtensionArchTable(torchVersion);
    if (meansVisibleGpus(value, table)) return [];
    const entries = cppExtensionEntries(value, table ?? NEWEST_CPP_EXTENSION_TABLE);
    const rejected = entries.filter((entry) => !acceptedEntry(entry, table));
    if (rejected.length === 0) return [];
    // The fix keeps what this torch accepts (commas read as separators); with nothing left, the GPUs' own capabilities.
    const kept = [
      ...new Set(entries.flatMap((e) => e.split(",")).filter((e) => e !== "" && acceptedEntry(e, table))),
    ];
    const fromGpus = deviceCapabilities(facts)
      .map((gpu) => formatComputeCapability(gpu.cc))
      .filter((cc) => acceptedEntry(cc, table));
    const fixed = kept.length > 0 ? kept : [...new Set(fromGpus)];
    const judgedBy = table
      ? `torch ${table.torch}'s table (${table.source})`
      : `the form every torch table read has (X.Y or X.Ya, optionally +PTX); no table of torch ${torchVersion} was read`;
    return [
      makeFinding(this, {
        message: `torch ${torchVersion}'s cpp_extension rejects ${rejected.map((e) => JSON.stringify(e)).join(", ")} in TORCH_CUDA_ARCH_LIST: every extension built from source stops with "ValueError: Unknown CUDA arch (${rejected[0]}) or GPU not supported".`,
        evidence: [
          ev("TORCH_CUDA_ARCH_LIST", JSON.stringify(value)),
          ev("entries as cpp_extension splits them", entries.map((e) => JSON.stringify(e)).join(" ")),
          ev("rejected", rejected.map((e) => JSON.stringify(e)).join(" ")),
          ev("judged by", judgedBy),
        ],
        fix: {
          summary:
            "Write only X.Y or X.Ya entries (optionally +PTX) that this torch knows, separated by ';' or spaces, with no empty entries; or unset it where the GPUs are visible.",
          commands: [
            ...(fixed.length > 0 ? [`export TORCH_CUDA_ARCH_LIST="${fixed.join(";")}"`] : []),
            "unset TORCH_CUDA_ARCH_LIST",
          ],
        },
      }),
    ];
  },
};
