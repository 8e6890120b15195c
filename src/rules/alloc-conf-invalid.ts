/**
 * PYTORCH_CUDA_ALLOC_CONF is parsed by torch's caching allocator at the first CUDA allocation; a
 * malformed value makes that allocation raise. Checked for syntax here, and from torch's own error.
 */
import type { Rule } from "../findings/types.js";
import { ev, makeFinding } from "../findings/finding.js";
import { envVar, torchLive } from "../rule-helpers/view.js";

/** The documented syntax: comma-separated <option>:<value> pairs. */
function malformedEntries(value: string): string[] {
  return value
    .split(",")
    .map((entry) => entry.trim())
    .filter((entry) => entry !== "" && !/^[A-Za-z_]\w*:[^:\s]+$/.test(entry));
}

export const allocConfInvalid: Rule = {
  id: "alloc-conf-invalid",
  title: "PYTORCH_CUDA_ALLOC_CONF is invalid",
  severity: "error",
  check(facts) {
    const name =
      envVar(facts, "PYTORCH_CUDA_ALLOC_CONF") !== undefined
        ? "PYTORCH_CUDA_ALLOC_CONF"
        : "PYTORCH_ALLOC_CONF";
    const value = envVar(facts, name);
    if (value === undefined) return [];
    const live = torchLive(facts);
    const torchError = [live?.kernel.error, live?.cudaInitError, facts.python.torchLive.error].find(
      (e) => e && /CachingAllocator option|ALLOC_CONF|allocator config/i.test(e),
    );
    const malformed = malformedEntries(value);
    if (!torchError && malformed.length === 0) return [];
    // Rejected at CUDA init, it is why torch sees no GPU: one finding with torch-cuda-unavailable.
    const blocksCuda = torchError !== undefined && live?.cudaAvailable === false;
    return [
      makeFinding(this, {
        ...(blocksCuda ? { cause: "cuda-unavailable", subject: "torch" } : {}),
        message: torchError
          ? `torch rejects ${name}=${JSON.stringify(value)}: ${torchError.split("\n")[0]}.`
          : `${name}=${JSON.stringify(value)} has entries that are not option:value pairs (${malformed.join(", ")}); torch raises on the first CUDA allocation.`,
        evidence: [
          ev(name, JSON.stringify(value)),
          ev("torch error", torchError ?? "(torch did not report one)"),
        ],
        fix: {
          summary:
            "Write it as comma-separated option:value pairs with options from the PyTorch CUDA semantics notes, or unset it.",
          commands: [`unset ${name}`, `export ${name}=expandable_segments:True`],
        },
      }),
    ];
  },
};
