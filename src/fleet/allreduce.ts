/**
 * A multi-node all-reduce through torchrun under srun: one launcher per node starts
 * `python -m torch.distributed.run` with a static rendezvous at the first node, and rank 0 reports
 * timings and a correctness check. NCCL where torch has CUDA and NCCL, else gloo on the CPU. The
 * knowledge base has no interconnect peaks, so the figures are reported, not judged.
 */
import { execSlurm, slurmTransport, type SlurmSelection } from "../transports/slurm.js";
import type { NodeResult } from "./types.js";

const WORKER = String.raw`
import json, os, sys, time
import torch
import torch.distributed as dist
cuda = torch.cuda.is_available()
backend = "nccl" if cuda and dist.is_nccl_available() else "gloo"
dist.init_process_group(backend)
rank, world = dist.get_rank(), dist.get_world_size()
dev = torch.device("cuda", int(os.environ.get("LOCAL_RANK", "0"))) if backend == "nccl" else torch.device("cpu")
rows = []
for size in ([1 << 20, 1 << 24, 1 << 28] if backend == "nccl" else [1 << 16, 1 << 20, 1 << 22]):
    x = torch.ones(size // 4, dtype=torch.float32, device=dev)
    for _ in range(3):
        dist.all_reduce(x)
    if backend == "nccl":
        torch.cuda.synchronize()
    reps = 20 if backend == "nccl" else 5
    t0 = time.perf_counter()
    for _ in range(reps):
        dist.all_reduce(x)
    if backend == "nccl":
        torch.cuda.synchronize()
    dt = (time.perf_counter() - t0) / reps
    algbw = size / dt / 1e9
    rows.append({"bytes": size, "seconds": dt, "algbwGBs": algbw, "busbwGBs": algbw * 2 * (world - 1) / world})
check = torch.full((4,), float(rank + 1), device=dev)
dist.all_reduce(check)
correct = abs(check[0].item() - world * (world + 1) / 2) < 1e-3
if rank == 0:
    with open(sys.argv[1], "w") as f:
        json.dump({"backend": backend, "world": world, "sizes": rows, "correct": correct, "torch": torch.__version__}, f)
dist.barrier()
dist.destroy_process_group()
`;

/** Runs on each node: argv = master_addr master_port nnodes timeout_seconds. */
const ALLREDUCE_LAUNCHER = String.raw`
import json, os, subprocess, sys, tempfile
addr, port, nnodes, timeout = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4])
work = tempfile.mkdtemp(prefix="gpuprep-allreduce-")
worker = os.path.join(work, "allreduce_worker.py")
result_file = os.path.join(work, "result.json")
with open(worker, "w") as f:
    f.write(WORKER_SOURCE)
rank = os.environ.get("SLURM_NODEID", "0")
# --redirects 1 --tee 2, not the default 0: torch 1.13 torchrun cannot parse 0 (nor 3) on Python 3.11
# (Std.NONE is no longer iterated), and the workers' output goes to log files under work either way.
cmd = [sys.executable, "-m", "torch.distributed.run", "--nnodes", nnodes, "--nproc_per_node", "1",
       "--node_rank", rank, "--master_addr", addr, "--master_port", port,
       "--log_dir", os.path.join(work, "logs"), "--redirects", "1", "--tee", "2", worker, result_file]
out = {"nodeRank": int(rank), "returncode": None, "result": None, "error": None}
try:
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True, timeout=timeout)
    out["returncode"] = p.returncode
    if os.path.exists(result_file):
        with open(result_file) as f:
            out["result"] = json.load(f)
    if p.returncode != 0:
        out["error"] = (p.stderr.strip().splitlines() or ["exit %d" % p.returncode])[-1][:300]
except subprocess.TimeoutExpired:
    out["error"] = "torchrun did not finish within %ds" % timeout
except Exception as e:
    out["error"] = "%s: %s" % (type(e).__name__, e)
print(json.dumps(out))
`.replace("WORKER_SOURCE", JSON.stringify(WORKER));

export interface AllreduceResult {
  nodes: string[];
  backend: string | null;
  world: number | null;
  sizes: Array<{ bytes: number; seconds: number; algbwGBs: number; busbwGBs: number }>;
  correct: boolean | null;
  /** node -> error, for nodes whose launcher failed. */
  errors: Record<string, string>;
}

/** The address the first node listens on (its NodeAddr; node names need not resolve). */
async function nodeAddress(node: string): Promise<string> {
  const result = await execSlurm("scontrol", ["show", "node", node, "-o"], 30_000);
  return /NodeAddr=(\S+)/.exec(result.stdout)?.[1] ?? node;
}

export async function runAllreduce(
  selection: SlurmSelection,
  python: string,
  nodes: string[],
  port: number,
  nodeTimeoutMs: number,
): Promise<AllreduceResult> {
  const empty: AllreduceResult = { nodes, backend: null, world: null, sizes: [], correct: null, errors: {} };
  if (nodes.length < 2)
    return {
      ...empty,
      errors: { fleet: `an all-reduce across nodes needs 2 healthy nodes; ${nodes.length} answered` },
    };
  const first = nodes[0] as string;
  const addr = await nodeAddress(first);
  const { nodes: _count, ...rest } = selection;
  const transport = slurmTransport({ selection: { ...rest, nodelist: nodes.join(",") }, python });
  const seconds = Math.ceil(nodeTimeoutMs / 1000);
  const runs = await transport.runPythonOnNodes(
    ALLREDUCE_LAUNCHER,
    [addr, String(port), String(nodes.length), String(seconds)],
    nodeTimeoutMs + 30_000,
  );
  const result = { ...empty };
  for (const run of runs) {
    if (run.state !== "ran" || !run.result) {
      result.errors[run.node] = `${run.state}: ${run.reason ?? ""}`;
      continue;
    }
    const line = run.result.stdout.trim().split("\n").pop() ?? "";
    try {
      const data = JSON.parse(line) as {
        result?: AllreduceResult & { backend: string; world: number };
        error?: string | null;
      };
      if (data.error) result.errors[run.node] = data.error;
      if (data.result) {
        result.backend = data.result.backend;
        result.world = data.result.world;
        result.sizes = data.result.sizes;
        result.correct = data.result.correct;
      }
    } catch {
      result.errors[run.node] =
        `no launcher result (${run.result.stderr.trim().split("\n").pop() ?? "no output"})`.slice(0, 300);
    }
  }
  return result;
}

/**
 * What --allreduce did: ran on the nodes whose torch imports (the others are named and left out,
 * so a missing torch is not reported as a network problem), or was not run.
 */
export interface AllreduceOutcome {
  /** Nodes left out, with why (torch missing, its import failed, the node was not checked). */
  leftOut: Array<{ node: string; why: string }>;
  /** null when fewer than two nodes could take part. */
  result: AllreduceResult | null;
}

/** Why a checked node cannot take part in the all-reduce, or null when it can. */
export function allreduceExclusion(result: NodeResult): string | null {
  if (result.status !== "ok" || !result.facts) return `not checked (${result.status})`;
  const python = result.facts.python;
  if (!python.torch) return "torch is not installed";
  if (python.torchLive.status !== "ok") return `import torch ${python.torchLive.status}`;
  return null;
}
