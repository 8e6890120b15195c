/**
 * NCCL transport switches left set after the hang or container problem they worked around: NCCL
 * then moves GPU-to-GPU traffic over slower paths, with no error. What is reported follows the
 * catalog's condition for each switch (docs/failures.md F77, R23):
 * - NCCL_P2P_DISABLE=1, NCCL_P2P_LEVEL=LOC (or 0), NCCL_SHM_DISABLE=1 only with two or more GPUs: P2P
 *   and SHM carry traffic between GPUs of one node, so with one GPU they carry nothing.
 * - NCCL_CUMEM_ENABLE=0 on GB200/GB300 parts, where it disables multi-node NVLink (vllm PR#16992).
 * - Not NCCL_IB_DISABLE=1 or NCCL_NET_GDR_LEVEL: they cost something only with RDMA NICs, which the
 *   probe does not record yet (catalog F75).
 * Several GeForce GPUs are the case where P2P_DISABLE is the known fix for a hang (catalog F78): that
 * is said as info instead of a warning.
 */
import type { Facts, GpuFacts } from "../facts/schema.js";
import type { Evidence, Rule } from "../findings/types.js";
import { ev, makeFinding } from "../findings/finding.js";
import { envVar, smiGpus } from "../rule-helpers/view.js";

interface Found {
  name: string;
  value: string;
  effect: string;
}

const isGeForce = (gpu: GpuFacts) => /geforce/i.test(gpu.name);
const isGraceBlackwellNvl = (gpu: GpuFacts) => /\bGB[23]00\b/i.test(gpu.name);

function switchesFound(facts: Facts, gpus: GpuFacts[]): Found[] {
  const found: Found[] = [];
  const check = (name: string, on: (value: string) => boolean, effect: string) => {
    const value = envVar(facts, name);
    if (value !== undefined && on(value.trim())) found.push({ name, value, effect });
  };
  if (gpus.length >= 2) {
    check("NCCL_P2P_DISABLE", (v) => v === "1", "no direct GPU-to-GPU copies over NVLink or PCIe");
    check(
      "NCCL_P2P_LEVEL",
      (v) => v.toUpperCase() === "LOC" || v === "0",
      "LOC/0 means never use P2P, the same as NCCL_P2P_DISABLE=1",
    );
    check("NCCL_SHM_DISABLE", (v) => v === "1", "no shared-memory transport between GPUs of this node");
  }
  if (gpus.some(isGraceBlackwellNvl))
    check(
      "NCCL_CUMEM_ENABLE",
      (v) => v === "0",
      "disables multi-node NVLink: all-reduce falls back to the network",
    );
  return found;
}

export const ncclTransportDisabled: Rule = {
  id: "nccl-transport-disabled",
  title: "NCCL transports are switched off by environment variables",
  severity: "warning",
  check(facts) {
    const gpus = smiGpus(facts);
    const found = switchesFound(facts, gpus);
    if (found.length === 0) return [];
    const names = found.map((f) => f.name);
    const p2pOnly = found.every((f) => f.name === "NCCL_P2P_DISABLE" || f.name === "NCCL_P2P_LEVEL");
    const knownWorkaround = p2pOnly && gpus.length >= 2 && gpus.every(isGeForce);
    const evidence: Evidence[] = [
      ...found.map((f) => ev(f.name, `${JSON.stringify(f.value)}: ${f.effect}`)),
      ev("GPUs", `${gpus.length}: ${[...new Set(gpus.map((g) => g.name))].join(", ")}`),
    ];
    return [
      makeFinding(this, {
        severity: knownWorkaround ? "info" : "warning",
        message: knownWorkaround
          ? `${names.join(", ")} keeps NCCL off peer-to-peer on these GeForce GPUs: the known workaround for all-reduce hangs on such boxes; keep it only while a P2P test still hangs.`
          : `${names.join(", ")} ${names.length === 1 ? "is" : "are"} set: NCCL moves traffic between these ${gpus.length} GPUs over slower paths, with no error to say so.`,
        evidence,
        fix: {
          summary:
            "Unset them and measure all-reduce bus bandwidth with and without; keep a switch only where the test shows it is needed (a hang on consumer GPUs, a too-small /dev/shm), and then fix that cause instead.",
          commands: [
            `unset ${names.join(" ")}`,
            `all_reduce_perf -b 8M -e 1G -f 2 -g ${Math.max(gpus.length, 2)}   # nccl-tests: compare busbw with and without`,
          ],
        },
      }),
    ];
  },
};
