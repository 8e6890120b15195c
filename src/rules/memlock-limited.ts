/** A limited locked-memory ulimit breaks pinned-memory registration used by NCCL and GPUDirect RDMA. */
import type { Rule } from "../findings/types.js";
import { ev, makeFinding } from "../findings/finding.js";
import { hostHasNvidiaGpu } from "../rule-helpers/view.js";

const show = (v: number | "unlimited" | null) =>
  v === null ? "(unknown)" : v === "unlimited" ? "unlimited" : `${Math.round(v / 1024)} KiB`;

export const memlockLimited: Rule = {
  id: "memlock-limited",
  title: "Locked memory (ulimit -l) is limited",
  severity: "warning",
  check(facts) {
    const memlock = facts.host.ulimits.memlock;
    if (!hostHasNvidiaGpu(facts) || memlock.soft === null || memlock.soft === "unlimited") return [];
    const container = facts.host.container.inContainer;
    return [
      makeFinding(this, {
        message:
          `The locked-memory limit is ${show(memlock.soft)}: NCCL over InfiniBand/RoCE and GPUDirect RDMA cannot register ` +
          `buffers ("NCCL WARN Call to ibv_reg_mr failed" / "Cannot allocate memory"), and large pinned host buffers may fail.`,
        evidence: [
          ev("ulimit -l (soft)", show(memlock.soft)),
          ev("ulimit -l (hard)", show(memlock.hard)),
          ev("in container", container ? "yes" : "no"),
        ],
        fix: {
          summary: container
            ? "Start the container with an unlimited memlock limit."
            : "Raise the memlock limit for your user.",
          commands: container
            ? [
                "docker run --ulimit memlock=-1 --ulimit stack=67108864 ...",
                "# compose.yaml: ulimits: { memlock: -1 }",
              ]
            : [
                "ulimit -l unlimited   # needs the hard limit raised first:",
                "echo '* - memlock unlimited' | sudo tee /etc/security/limits.d/99-memlock.conf",
              ],
        },
      }),
    ];
  },
};
