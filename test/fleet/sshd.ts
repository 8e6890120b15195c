/**
 * A real OpenSSH server on loopback for the --hosts tests: Debian's sshd with a throwaway host key
 * and a throwaway client key, run in the foreground as our child and killed in stop(). Several
 * host aliases point at it through an ssh client config (ssh -F), each with its own environment
 * (SetEnv, accepted by the server for the variables named): one machine stands for a cluster.
 */
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync, existsSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ROOT, aptPart, commandExists, missing, type Part } from "../support/needs.js";

export const SSHD_PARTS: Part[] = [
  ROOT,
  aptPart(
    "OpenSSH server and client",
    "openssh-server openssh-client",
    () => existsSync("/usr/sbin/sshd") && commandExists("ssh ssh-keygen"),
  ),
];
export const PDSH = aptPart("pdsh", "pdsh", () => commandExists("pdsh"));
export const CLUSH = aptPart("ClusterShell", "clustershell", () => commandExists("clush"));

export function sshdSkipReason(): string | false {
  return missing(...SSHD_PARTS) ?? false;
}

export interface SshHost {
  alias: string;
  /** Variables the host's sessions get (SetEnv in the client config, AcceptEnv on the server). */
  env?: Record<string, string>;
  /** Points at a port nothing listens on: ssh fails to connect. */
  dead?: boolean;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      const port = typeof address === "object" && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

export class SshCluster {
  private constructor(
    readonly dir: string,
    /** The client config to pass as --ssh-config. */
    readonly config: string,
    private readonly daemon: ChildProcess,
  ) {}

  static async start(hosts: SshHost[], acceptEnv: string[]): Promise<SshCluster> {
    const dir = mkdtempSync(join(tmpdir(), "gpuprep-sshd-"));
    const keygen = (file: string) => {
      const run = spawnSync("ssh-keygen", ["-q", "-t", "ed25519", "-N", "", "-f", join(dir, file)], {
        encoding: "utf8",
      });
      if (run.status !== 0) throw new Error(`ssh-keygen: ${run.stderr}`);
    };
    keygen("host_key");
    keygen("id_ed25519");
    spawnSync("cp", [join(dir, "id_ed25519.pub"), join(dir, "authorized_keys")]);
    const [port, deadPort] = [await freePort(), await freePort()];
    writeFileSync(
      join(dir, "sshd_config"),
      [
        `Port ${port}`,
        "ListenAddress 127.0.0.1",
        `HostKey ${join(dir, "host_key")}`,
        `PidFile ${join(dir, "sshd.pid")}`,
        `AuthorizedKeysFile ${join(dir, "authorized_keys")}`,
        "PermitRootLogin prohibit-password",
        "PasswordAuthentication no",
        "KbdInteractiveAuthentication no",
        "UsePAM no",
        // The keys live under /tmp (world-writable): sshd's ownership checks would refuse them.
        "StrictModes no",
        `AcceptEnv ${acceptEnv.join(" ")}`,
        "",
      ].join("\n"),
    );
    const lines: string[] = [];
    for (const host of hosts) {
      lines.push(
        `Host ${host.alias}`,
        "  HostName 127.0.0.1",
        `  Port ${host.dead ? deadPort : port}`,
        "  User root",
        `  IdentityFile ${join(dir, "id_ed25519")}`,
        "  IdentitiesOnly yes",
        "  StrictHostKeyChecking no",
        "  UserKnownHostsFile /dev/null",
        "  LogLevel ERROR",
        ...(host.env && Object.keys(host.env).length
          ? [
              `  SetEnv ${Object.entries(host.env)
                .map(([k, v]) => `${k}=${v}`)
                .join(" ")}`,
            ]
          : []),
      );
    }
    const config = join(dir, "ssh_config");
    writeFileSync(config, lines.join("\n") + "\n");
    // sshd's privilege separation directory (Debian's service unit makes it at boot).
    mkdirSync("/run/sshd", { recursive: true });
    const daemon = spawn("/usr/sbin/sshd", ["-D", "-e", "-f", join(dir, "sshd_config")], {
      stdio: ["ignore", "ignore", "pipe"],
    });
    let log = "";
    daemon.stderr?.on("data", (c: Buffer) => (log = (log + c.toString()).slice(-4000)));
    const cluster = new SshCluster(dir, config, daemon);
    const first = hosts.find((h) => !h.dead)?.alias ?? "";
    const deadline = Date.now() + 20_000;
    while (Date.now() < deadline) {
      const probe = spawnSync("ssh", ["-F", config, "-o", "BatchMode=yes", first, "true"], {
        encoding: "utf8",
        timeout: 10_000,
      });
      if (probe.status === 0) return cluster;
      await new Promise((r) => setTimeout(r, 300));
    }
    cluster.stop();
    throw new Error(`sshd did not take a login: ${log}`);
  }

  stop(): void {
    this.daemon.kill("SIGKILL");
    rmSync(this.dir, { recursive: true, force: true });
  }
}
