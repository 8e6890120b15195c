/**
 * A real Slurm cluster on this one machine for the fleet tests: Debian's munged, slurmctld and
 * one slurmd per node (`slurmd -N NAME`, each on its own port; Debian's slurmd is built with
 * multiple-slurmd support). Everything lives in a temp dir with its own slurm.conf, munge key
 * and socket; the daemons run in the foreground as our children and are killed in stop(), and
 * on process exit, so no daemon outlives the tests.
 *
 * Per-node differences are made for real through Slurm's TaskProlog: it prints `export NAME=value`
 * lines for the node it runs on, so each node's tasks get their own PATH (another Python first,
 * a python3 that hangs, one that prints garbage) or CUDA_VISIBLE_DEVICES.
 */
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { createServer } from "node:net";
import { hostname, tmpdir } from "node:os";
import { join } from "node:path";
import { ROOT, aptPart, commandExists, missing, type Part } from "../support/needs.js";

const BIN = {
  munged: "/usr/sbin/munged",
  mungekey: "/usr/sbin/mungekey",
  slurmctld: "/usr/sbin/slurmctld-wlm",
  slurmd: "/usr/sbin/slurmd-wlm",
  slurmstepd: "/usr/sbin/slurmstepd-wlm",
};

export interface SimNode {
  name: string;
  /** false: defined in slurm.conf but its slurmd never started (the node is down). */
  start?: boolean;
  /** Variables the TaskProlog exports for tasks on this node. */
  env?: Record<string, string>;
}

/** What the harness needs: root (it starts the daemons) and Debian's Slurm and munge. */
export const SLURM_PARTS: Part[] = [
  ROOT,
  aptPart(
    "Slurm",
    "slurmctld slurmd slurm-client munge",
    () => Object.values(BIN).every((path) => existsSync(path)) && commandExists("srun sinfo sbatch scontrol"),
  ),
];

/** Why the real-Slurm tests cannot run here, or false. */
export function slurmSkipReason(): string | false {
  return missing(...SLURM_PARTS) ?? false;
}

function portIsFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once("error", () => resolve(false));
    server.listen(port, "127.0.0.1", () => server.close(() => resolve(true)));
  });
}

/**
 * Ports below Linux's ephemeral range (32768-60999), so no outgoing connection (srun's, munge's)
 * takes one between our check and the daemon's bind.
 */
async function freePorts(count: number): Promise<number[]> {
  const ports: number[] = [];
  let port = 12000 + Math.floor(Math.random() * 15000);
  while (ports.length < count && port < 32000) {
    if (await portIsFree(port)) ports.push(port);
    port++;
  }
  if (ports.length < count) throw new Error("slurm harness: no free ports below 32000");
  return ports;
}

const live = new Set<ChildProcess>();
process.on("exit", () => {
  for (const child of live) child.kill("SIGKILL");
});

function shellQuote(word: string): string {
  return `'${word.replace(/'/g, `'\\''`)}'`;
}

export class SlurmCluster {
  private constructor(
    readonly dir: string,
    readonly env: NodeJS.ProcessEnv,
    readonly nodes: SimNode[],
    private readonly children: ChildProcess[],
  ) {}

  /** The slurmd of each started node, to crash one (crashNode). */
  private readonly daemons = new Map<string, ChildProcess>();

  static async start(
    nodes: SimNode[],
    options: {
      cpus?: number;
      /** More slurm.conf lines (another partition, SchedulerParameters, ...). */
      conf?: string[];
    } = {},
  ): Promise<SlurmCluster> {
    const dir = mkdtempSync(join(tmpdir(), "gpuprep-slurm-"));
    for (const sub of ["state", "log", "spool"]) mkdirSync(join(dir, sub));
    const children: ChildProcess[] = [];
    const conf = join(dir, "slurm.conf");
    const env: NodeJS.ProcessEnv = { ...process.env, SLURM_CONF: conf };
    delete env["SLURM_JOB_ID"];
    delete env["SLURM_JOBID"];
    delete env["SLURM_JOB_NODELIST"];
    const cluster = new SlurmCluster(dir, env, nodes, children);
    try {
      const run = (cmd: string, args: string[]) => {
        const child = spawn(cmd, args, { stdio: ["ignore", "ignore", "pipe"], env });
        let err = "";
        child.stderr?.on("data", (c: Buffer) => (err = (err + c.toString()).slice(-2000)));
        child.on("exit", (code) => {
          live.delete(child);
          if (code && code !== 0 && !cluster.stopping)
            process.stderr.write(`slurm harness: ${cmd} exited ${code}: ${err}\n`);
        });
        live.add(child);
        children.push(child);
        return child;
      };
      const key = join(dir, "munge.key");
      const keygen = spawnSync(BIN.mungekey, ["-c", "-f", "-k", key]);
      if (keygen.status !== 0) throw new Error(`mungekey: ${keygen.stderr.toString()}`);
      chmodSync(key, 0o600);
      const socket = join(dir, "munge.sock");
      // 2 threads (the default) are too few for 64 slurmd and srun at once ("restart with --num-threads=10").
      run(BIN.munged, [
        "-F",
        "--force",
        "--num-threads=16",
        `--key-file=${key}`,
        `--socket=${socket}`,
        `--pid-file=${join(dir, "munged.pid")}`,
        `--log-file=${join(dir, "log", "munged.log")}`,
        `--seed-file=${join(dir, "munge.seed")}`,
      ]);
      await waitFor(() => existsSync(socket), 15_000, "munged's socket");

      const host = hostname();
      const [ctldPort = 0, ...nodePorts] = await freePorts(nodes.length + 1);
      const cpus = options.cpus ?? 2;
      const nodeLines: string[] = [];
      nodes.forEach((node, i) => {
        nodeLines.push(
          `NodeName=${node.name} NodeHostname=${host} NodeAddr=127.0.0.1 Port=${nodePorts[i] ?? 0} CPUs=${cpus} State=UNKNOWN`,
        );
      });
      const prolog = join(dir, "task-prolog.sh");
      writeFileSync(prolog, taskProlog(nodes));
      chmodSync(prolog, 0o755);
      writeFileSync(
        conf,
        [
          "ClusterName=gpuprep-test",
          `SlurmctldHost=${host}(127.0.0.1)`,
          `SlurmctldPort=${ctldPort}`,
          "AuthType=auth/munge",
          `AuthInfo=socket=${socket}`,
          "CredType=cred/munge",
          "SlurmUser=root",
          "SlurmdUser=root",
          `StateSaveLocation=${join(dir, "state")}`,
          `SlurmdSpoolDir=${join(dir, "spool", "%n")}`,
          `SlurmctldPidFile=${join(dir, "slurmctld.pid")}`,
          `SlurmdPidFile=${join(dir, "slurmd.%n.pid")}`,
          `SlurmctldLogFile=${join(dir, "log", "slurmctld.log")}`,
          `SlurmdLogFile=${join(dir, "log", "slurmd.%n.log")}`,
          `TaskProlog=${prolog}`,
          "ProctrackType=proctrack/linuxproc",
          "TaskPlugin=task/none",
          "SelectType=select/cons_tres",
          "SelectTypeParameters=CR_Core",
          "SchedulerType=sched/backfill",
          "ReturnToService=2",
          "MpiDefault=none",
          "JobCompType=jobcomp/none",
          "AccountingStorageType=accounting_storage/none",
          "JobAcctGatherType=jobacct_gather/none",
          "SlurmdTimeout=300",
          "MessageTimeout=20",
          "InactiveLimit=0",
          "KillWait=5",
          "MaxJobCount=100000",
          ...nodeLines,
          `PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP OverSubscribe=FORCE:${Math.max(4, nodes.length)}`,
          ...(options.conf ?? []),
          "",
        ].join("\n"),
      );
      run(BIN.slurmctld, ["-D", "-i", "-f", conf]);
      await waitFor(() => spawnSync("sinfo", ["-h"], { env }).status === 0, 30_000, "slurmctld to answer");
      for (const node of nodes) {
        if (node.start === false) continue;
        mkdirSync(join(dir, "spool", node.name), { recursive: true });
        cluster.daemons.set(
          node.name,
          run(BIN.slurmd, ["-D", "-N", node.name, "-f", conf, "-d", BIN.slurmstepd]),
        );
      }
      const started = nodes.filter((n) => n.start !== false).map((n) => n.name);
      await waitFor(
        () => {
          const out = spawnSync("sinfo", ["-h", "-N", "-o", "%N %T"], { env, encoding: "utf8" }).stdout;
          const idle = new Set(
            out
              .split("\n")
              .filter((l) => / idle$/.test(l))
              .map((l) => l.split(" ")[0]),
          );
          return started.every((n) => idle.has(n));
        },
        120_000,
        "every started node to be idle",
      );
      return cluster;
    } catch (error) {
      await cluster.stop();
      throw error;
    }
  }

  stopping = false;

  /** Kills every daemon we started (slurmd first) and removes the temp dir. */
  async stop(): Promise<void> {
    this.stopping = true;
    // Jobs still running (a hung probe) are killed with their slurmstepd.
    spawnSync("scancel", ["--user=root", "--full"], { env: this.env, timeout: 10_000 });
    for (const child of [...this.children].reverse()) child.kill("SIGTERM");
    await new Promise((r) => setTimeout(r, 1000));
    for (const child of this.children) {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
      live.delete(child);
    }
    // Steps whose slurmd is gone (slurmstepd reparents to init) and their tasks: every process
    // that carries this cluster's SLURM_CONF.
    for (const pid of processesWithEnv(`SLURM_CONF=${this.env["SLURM_CONF"] ?? ""}`)) {
      try {
        process.kill(pid, "SIGKILL");
      } catch {
        // gone already
      }
    }
    rmSync(this.dir, { recursive: true, force: true });
  }

  /** A Slurm client command with this cluster's SLURM_CONF; throws with its stderr when it fails. */
  slurm(command: string, args: string[]): string {
    const run = spawnSync(command, args, { env: this.env, encoding: "utf8", timeout: 30_000 });
    if (run.status !== 0) throw new Error(`${command} ${args.join(" ")}: ${run.stderr}`);
    return run.stdout;
  }

  /**
   * A drained or down node back in service, returned once slurmctld shows it idle: it takes a
   * moment, and a test after it that finds the node still drained leaves it out.
   */
  async resumeNode(name: string): Promise<void> {
    this.slurm("scontrol", ["update", `NodeName=${name}`, "State=RESUME"]);
    await waitFor(
      () => this.slurm("sinfo", ["-h", "-n", name, "-o", "%T"]).trim() === "idle",
      30_000,
      `${name} to be idle again`,
    );
  }

  /**
   * A node crashing mid-run, as the controller sees it: slurmctld marks it DOWN (what it does when
   * the node stops answering; the harness's SlurmdTimeout is 300 s, so it is told at once), and its
   * slurmd and every task on it are gone (SIGKILL).
   */
  crashNode(name: string): void {
    this.slurm("scontrol", ["update", `NodeName=${name}`, "State=DOWN", "Reason=crashed (test)"]);
    this.daemons.get(name)?.kill("SIGKILL");
    for (const pid of processesWithEnv(`SLURMD_NODENAME=${name}`)) {
      try {
        process.kill(pid, "SIGKILL");
      } catch {
        // gone already
      }
    }
  }

  /** Runs a gpuprep CLI command with this cluster's SLURM_CONF. */
  envWith(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
    return { ...this.env, ...extra };
  }
}

/** Pids (not ours) whose environment holds this exact NAME=value entry. */
function processesWithEnv(entry: string): number[] {
  const pids: number[] = [];
  for (const name of readdirSync("/proc")) {
    const pid = Number(name);
    if (!Number.isInteger(pid) || pid === process.pid) continue;
    try {
      if (readFileSync(`/proc/${pid}/environ`, "latin1").split("\0").includes(entry)) pids.push(pid);
    } catch {
      // exited, or not readable
    }
  }
  return pids;
}

function taskProlog(nodes: SimNode[]): string {
  const cases = nodes
    .filter((n) => n.env && Object.keys(n.env).length > 0)
    .map(
      (n) =>
        `  ${n.name}) ${Object.entries(n.env ?? {})
          .map(([k, v]) => `echo ${shellQuote(`export ${k}=${v}`)}`)
          .join("; ")} ;;`,
    );
  return [
    "#!/bin/sh",
    "# Written by the gpuprep test harness: per-node environments.",
    'case "$SLURMD_NODENAME" in',
    ...cases,
    "esac",
    "",
  ].join("\n");
}

async function waitFor(check: () => boolean, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (check()) return;
    await new Promise((r) => setTimeout(r, 300));
  }
  throw new Error(`slurm harness: timed out waiting for ${what}`);
}

/** Scripts that stand in for python3 on a node's PATH (a hang, garbage), and a venv without torch. */
export function makeNodeEnvironments(dir: string): { venvBin: string; hangBin: string; garbageBin: string } {
  const venv = join(dir, "venv-no-torch");
  const made = spawnSync("/usr/bin/python3", ["-m", "venv", "--without-pip", venv], { encoding: "utf8" });
  if (made.status !== 0) throw new Error(`python3 -m venv: ${made.stderr}`);
  const hangBin = join(dir, "hang-bin");
  const garbageBin = join(dir, "garbage-bin");
  mkdirSync(hangBin);
  mkdirSync(garbageBin);
  // A python3 that never answers (an import stuck on a dead filesystem looks the same).
  writeFileSync(join(hangBin, "python3"), "#!/bin/sh\nexec sleep 100000\n");
  // A python3 that answers with noise and exits 0 (a wrapper gone wrong).
  writeFileSync(
    join(garbageBin, "python3"),
    '#!/bin/sh\nhead -c 3000 /dev/urandom | od -c | head -50\necho \'{"host": "not json\'\nexit 0\n',
  );
  chmodSync(join(hangBin, "python3"), 0o755);
  chmodSync(join(garbageBin, "python3"), 0o755);
  return { venvBin: join(venv, "bin"), hangBin, garbageBin };
}
