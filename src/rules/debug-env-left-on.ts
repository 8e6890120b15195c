/**
 * Debugging and caching switches left in the environment: each one makes CUDA work slower (or loads a
 * library other than the one intended) without any error, so they survive in shell profiles,
 * Dockerfiles and job scripts long after the debugging session. One finding lists them all.
 */
import type { Facts } from "../facts/schema.js";
import type { Evidence, Rule, Severity } from "../findings/types.js";
import { ev, makeFinding } from "../findings/finding.js";
import { envVar } from "../rule-helpers/view.js";

interface Switch {
  name: string;
  /** Whether this value turns the switch on. */
  isOn(value: string): boolean;
  severity: Severity;
  /** What it does while on, for the evidence line. */
  effect(value: string): string;
}

const SWITCHES: readonly Switch[] = [
  {
    // CUDA's documented values are 0 and 1 (default 0).
    name: "CUDA_LAUNCH_BLOCKING",
    isOn: (value) => value.trim() === "1",
    severity: "warning",
    effect: () => "every kernel launch waits for the GPU to finish (synchronous launches)",
  },
  {
    // torch's allocator tested only that the variable exists (getenv(...) != nullptr) until
    // pytorch PR#145905 (January 2025) made it "== 1"; any value is reported, and the message
    // says that 0 does not turn caching back on for torch built before that change.
    name: "PYTORCH_NO_CUDA_MEMORY_CACHING",
    isOn: () => true,
    severity: "warning",
    effect: (value) =>
      value.trim() === "1"
        ? "every allocation goes to cudaMalloc/cudaFree: torch's caching allocator is off"
        : "torch built before January 2025 turns its caching allocator off for any value, this one included; later torch only for 1",
  },
  {
    // torch sets LAZY itself when unset; EAGER is sometimes chosen on purpose, so info.
    name: "CUDA_MODULE_LOADING",
    isOn: (value) => value.trim().toUpperCase() === "EAGER",
    severity: "info",
    effect: () => "every kernel of every CUDA library is loaded at start-up (torch's default is LAZY)",
  },
  {
    name: "CUDA_CACHE_DISABLE",
    isOn: (value) => value.trim() === "1",
    severity: "warning",
    effect: () => "PTX JIT results are thrown away: PTX-only code is recompiled on every start",
  },
  {
    // bitsandbytes: an empty value means no override (its own warning says to set it empty).
    name: "BNB_CUDA_VERSION",
    isOn: (value) => value.trim() !== "",
    severity: "warning",
    effect: (value) =>
      `bitsandbytes loads libbitsandbytes_cuda${value.trim()} instead of the library for torch's CUDA`,
  },
];

const RANK: Record<Severity, number> = { error: 2, warning: 1, info: 0 };

function switchesOn(facts: Facts): { sw: Switch; value: string }[] {
  const on: { sw: Switch; value: string }[] = [];
  for (const sw of SWITCHES) {
    const value = envVar(facts, sw.name);
    if (value !== undefined && sw.isOn(value)) on.push({ sw, value });
  }
  return on;
}

export const debugEnvLeftOn: Rule = {
  id: "debug-env-left-on",
  title: "Debugging or cache switches are left on in the environment",
  severity: "warning",
  check(facts) {
    const on = switchesOn(facts);
    if (on.length === 0) return [];
    const severity = on.reduce<Severity>(
      (worst, { sw }) => (RANK[sw.severity] > RANK[worst] ? sw.severity : worst),
      "info",
    );
    const names = on.map(({ sw }) => sw.name);
    const evidence: Evidence[] = on.map(({ sw, value }) =>
      ev(sw.name, `${JSON.stringify(value)}: ${sw.effect(value)}`),
    );
    return [
      makeFinding(this, {
        severity,
        message: `${names.join(", ")} ${names.length === 1 ? "is" : "are"} left set: ${names.length === 1 ? "it changes" : "each changes"} how CUDA work runs (the evidence says how), with no error to say so.`,
        evidence,
        fix: {
          summary: `Unset ${names.length === 1 ? "it" : "them"} and delete the line that sets ${names.length === 1 ? "it" : "each"}: usually a shell rc file, a Dockerfile ENV line, a .env file or a job script. Set a debugging switch only for the one run that needs it.`,
          commands: [
            `unset ${names.join(" ")}`,
            `grep -nE '${names.join("|")}' ~/.bashrc ~/.profile ~/.zshrc /etc/environment Dockerfile .env 2>/dev/null`,
          ],
        },
      }),
    ];
  },
};
