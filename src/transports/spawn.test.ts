// The process helper against real shell scripts that misbehave: ignore SIGTERM, leave a daemon
// holding stdout, flood stdout. Each must come back within its limit, with bounded output.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { runCommand } from "./spawn.js";
import { isAlive, waitGone } from "./liveness.js";
import { localTransport } from "./local.js";

test("a SIGTERM-proof child and the grandchild it started are killed at the limit", async () => {
  const started = Date.now();
  const result = await runCommand("sh", ["-c", "trap '' TERM; sleep 1000 & echo $!; wait"], {
    timeoutMs: 800,
  });
  const elapsed = Date.now() - started;
  assert.equal(result.timedOut, true);
  assert.ok(elapsed < 5000, `took ${elapsed} ms`);
  const grandchild = Number(result.stdout.trim());
  assert.ok(grandchild > 1, `no pid in ${JSON.stringify(result.stdout)}`);
  assert.ok(await waitGone(grandchild), `sleep ${grandchild} survived the group kill`);
});

test("a daemon that inherited stdout does not hold the result back, and is killed", async () => {
  const started = Date.now();
  const result = await runCommand("sh", ["-c", "(sleep 1000 & echo $!); echo hi"], { timeoutMs: 20_000 });
  const elapsed = Date.now() - started;
  assert.equal(result.timedOut, false);
  assert.equal(result.code, 0);
  const [daemon, hi] = result.stdout.trim().split("\n");
  assert.equal(hi, "hi");
  assert.ok(elapsed < 3000, `waited ${elapsed} ms for the daemon's pipe`);
  assert.ok(await waitGone(Number(daemon)), "the daemon left in the child's group survived");
});

test("the plain case from the issue: `(sleep 1000 &) ; echo hi` returns at once", async () => {
  const started = Date.now();
  const result = await runCommand("sh", ["-c", "(sleep 1000 &) ; echo hi"], { timeoutMs: 20_000 });
  assert.equal(result.stdout, "hi\n");
  assert.ok(Date.now() - started < 3000);
});

test("a flood of stdout is capped: the head is kept and the truncation noted", async () => {
  const cap = 1024 * 1024;
  // 64 MB of "y\n" as fast as the pipe takes it, then an exit status we can check.
  const result = await runCommand("sh", ["-c", "yes | head -c 67108864; echo end >&2; exit 7"], {
    timeoutMs: 60_000,
    stdoutCapBytes: cap,
  });
  assert.equal(result.code, 7);
  assert.equal(result.stdout.length, cap);
  assert.ok(result.stdout.startsWith("y\ny\n"));
  assert.deepEqual(result.truncated, { stdout: true, stderr: false });
  assert.equal(result.stderr, "end\n");
  const small = await runCommand("sh", ["-c", "echo ok"], { timeoutMs: 5000, stdoutCapBytes: cap });
  assert.equal(small.truncated, undefined);
});

test("a never-ending flood is cut at the limit, memory bounded by the cap", async () => {
  const before = process.memoryUsage().rss;
  const result = await runCommand("yes", [], { timeoutMs: 1500, stdoutCapBytes: 2 * 1024 * 1024 });
  assert.equal(result.timedOut, true);
  assert.equal(result.stdout.length, 2 * 1024 * 1024);
  assert.ok(process.memoryUsage().rss - before < 200 * 1024 * 1024);
});

test("input reaches stdin; a missing command is CommandNotFoundError", async () => {
  const echoed = await runCommand("cat", [], { input: "line\n", timeoutMs: 5000 });
  assert.equal(echoed.stdout, "line\n");
  await assert.rejects(runCommand("/nonexistent/x", [], { timeoutMs: 5000 }), /not found/);
});

test("daemons that left the group and the session (setsid, start_new_session) do not outlive a payload run", async () => {
  const script = [
    "import subprocess, sys",
    "a = subprocess.Popen(['sleep', '1000'], start_new_session=True)",
    "b = subprocess.Popen(['setsid', 'sleep', '1001'])",
    "print(a.pid, b.pid)",
  ].join("\n");
  const result = await runCommand("/usr/bin/python3", ["-c", script], {
    timeoutMs: 20_000,
    reapDaemons: true,
  });
  assert.equal(result.code, 0, result.stderr);
  const pids = result.stdout.trim().split(" ").map(Number);
  assert.equal(pids.length, 2);
  for (const pid of pids) assert.ok(await waitGone(pid), `daemon ${pid} outlived the run`);
});

test("the probe's own run through the local transport reaps a setsid daemon; others' processes are left alone", async () => {
  const bystander = spawn("sleep", ["1002"], { detached: true, stdio: "ignore" });
  try {
    const result = await localTransport("/usr/bin/python3").runPython(
      "import subprocess; print(subprocess.Popen(['sleep', '1003'], start_new_session=True).pid)",
      [],
      20_000,
    );
    assert.ok(await waitGone(Number(result.stdout.trim())), "the daemon outlived the probe run");
    assert.equal(isAlive(bystander.pid!), true, "a process that is not the run's was killed");
  } finally {
    bystander.kill("SIGKILL");
  }
});
