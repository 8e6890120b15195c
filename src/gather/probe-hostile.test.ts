// The real probe against environments that fight it: a sitecustomize that prints a fake result,
// an interpreter that ignores SIGTERM and leaves a child behind.
import { test } from "node:test";
import assert from "node:assert/strict";
import { chmodSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { execFileSync } from "node:child_process";
import { join } from "node:path";
import { UserError } from "../errors.js";
import { localTransport } from "../transports/local.js";
import { waitGone } from "../transports/liveness.js";
import { runProbe } from "./probe.js";
import {
  DEBIAN_PYTHON,
  makeVenv as sharedMakeVenv,
  tempDir as sharedTempDir,
} from "../../test/support/venv.js";

const tempDir = () => sharedTempDir("gpuprep-probe-hostile-");
const makeVenv = () => sharedMakeVenv("gpuprep-probe-hostile-");

test('a sitecustomize printing a valid-looking {"host" line, before and after the probe, changes nothing', async () => {
  const [python, site] = makeVenv();
  const real = await runProbe(localTransport(python), { fast: true, timeoutMs: 30_000 });
  // The fake is the real result with one field changed, so it passes the schema.
  const fake = JSON.stringify({ ...real, host: { ...real.host, hostname: "spoofed-host" } });
  // Debian's own sitecustomize (in the stdlib directory) shadows one in a venv's site-packages, so
  // the hook is the other startup vector: a .pth line that imports a module. The same module is
  // also put first on PYTHONPATH as sitecustomize, which Python imports at startup.
  writeFileSync(join(site, "spoof.pth"), "import spoof_print\n");
  const hook = [
    "import atexit, sys",
    `FAKE = ${JSON.stringify(fake)}`,
    "print(FAKE)",
    // A frame with a guessed nonce, and a half line the probe's own line must not be glued to.
    "print('@gpuprep-probe 0123456789abcdef0123 ' + FAKE)",
    "sys.stdout.write('partial line without newline')",
    "atexit.register(lambda: print(FAKE))",
    "",
  ].join("\n");
  writeFileSync(join(site, "spoof_print.py"), hook);
  const hookDir = tempDir();
  writeFileSync(join(hookDir, "sitecustomize.py"), hook);
  // The fake really is printed (otherwise this test would prove nothing).
  const env = { ...process.env, PYTHONPATH: hookDir };
  const stdout = execFileSync(python, ["-c", "pass"], { encoding: "utf8", env });
  assert.equal(stdout.split("spoofed-host").length - 1, 6, stdout.slice(0, 300));
  const saved = process.env["PYTHONPATH"];
  process.env["PYTHONPATH"] = hookDir;
  let out;
  try {
    out = await runProbe(localTransport(python), { fast: true, timeoutMs: 30_000 });
  } finally {
    if (saved === undefined) delete process.env["PYTHONPATH"];
    else process.env["PYTHONPATH"] = saved;
  }
  assert.notEqual(out.host.hostname, "spoofed-host");
  assert.equal(out.host.hostname, real.host.hostname);
  assert.equal(out.python.interpreter.executable, real.python.interpreter.executable);
});

test("a probe interpreter that ignores SIGTERM: its whole process group is killed at the limit", async () => {
  const dir = tempDir();
  const pidFile = join(dir, "child.pid");
  const python = join(dir, "python");
  writeFileSync(python, `#!/bin/sh\nsleep 1000 &\necho $! > ${pidFile}\ntrap '' TERM\nsleep 1000\n`);
  chmodSync(python, 0o755);
  const started = Date.now();
  await assert.rejects(
    runProbe(localTransport(python), { fast: true, timeoutMs: 1500 }),
    (error: unknown) => {
      assert.ok(error instanceof UserError);
      assert.match(error.message, /did not finish the gpuprep probe within 2s \(killed\)/);
      return true;
    },
  );
  assert.ok(Date.now() - started < 6000, `took ${Date.now() - started} ms`);
  const child = Number(readFileSync(pidFile, "utf8").trim());
  assert.ok(await waitGone(child), `the probe's child ${child} outlived the timeout`);
});

test("a probe interpreter that leaves a daemon holding stdout: the result still comes back", async () => {
  const dir = tempDir();
  const python = join(dir, "python");
  // The daemon keeps the probe's stdout open long after the probe has printed and exited.
  writeFileSync(python, `#!/bin/sh\n(sleep 1000 &)\nexec ${DEBIAN_PYTHON} "$@"\n`);
  chmodSync(python, 0o755);
  const started = Date.now();
  const out = await runProbe(localTransport(python), { fast: true, timeoutMs: 30_000 });
  assert.equal(out.python.probe.mode, "fast");
  assert.ok(Date.now() - started < 10_000, `took ${Date.now() - started} ms`);
});

test("an extension whose import leaves a daemon: a fact, not a hang; the daemon in its group is killed", async () => {
  const [python, site] = makeVenv();
  const pids = tempDir();
  const pkg = (name: string, code: string) => {
    mkdirSync(join(site, name));
    writeFileSync(join(site, name, "__init__.py"), code);
  };
  // Stays in the import child's process group and holds its stdout.
  pkg(
    "triton",
    `import subprocess\np = subprocess.Popen(["sleep", "1000"])\nopen(${JSON.stringify(join(pids, "triton"))}, "w").write(str(p.pid))\n`,
  );
  // Leaves the group (its own session) but holds the pipes: only the pipe check sees it.
  pkg(
    "bitsandbytes",
    `import subprocess\np = subprocess.Popen(["sleep", "1000"], start_new_session=True)\nopen(${JSON.stringify(join(pids, "bnb"))}, "w").write(str(p.pid))\n`,
  );
  pkg("flash_attn", "__version__ = '2.7.0'\n");
  const started = Date.now();
  let out;
  try {
    out = await runProbe(localTransport(python), { fast: false, timeoutMs: 20_000 });
  } finally {
    const escaped = Number(readFileSync(join(pids, "bnb"), "utf8"));
    if (escaped > 1) process.kill(escaped, "SIGKILL");
  }
  const elapsed = Date.now() - started;
  // The import children get 15 s; waiting for the daemons' pipes would take that long.
  assert.ok(elapsed < 8000, `took ${elapsed} ms`);
  const byName = new Map(out.python.extensions.map((e) => [e.module, e]));
  assert.equal(byName.get("triton")?.status, "ok");
  assert.equal(byName.get("triton")?.leftProcesses, true);
  assert.equal(byName.get("bitsandbytes")?.status, "ok");
  assert.equal(byName.get("bitsandbytes")?.leftProcesses, true);
  assert.equal(byName.get("flash_attn")?.status, "ok");
  assert.equal(byName.get("flash_attn")?.leftProcesses, false);
  const daemon = Number(readFileSync(join(pids, "triton"), "utf8"));
  assert.ok(await waitGone(daemon), `the daemon ${daemon} in the import's group survived`);
});

test("a FIFO as a METADATA file in site-packages does not hold the probe (read_text opens nothing but regular files)", async () => {
  const [python, site] = makeVenv();
  const info = join(site, "fifo_dist-1.0.dist-info");
  mkdirSync(info);
  execFileSync("mkfifo", [join(info, "METADATA")]);
  mkdirSync(join(site, "zero_dist-1.0.dist-info"));
  symlinkSync("/dev/zero", join(site, "zero_dist-1.0.dist-info", "METADATA"));
  mkdirSync(join(site, "real_dist-2.0.dist-info"));
  writeFileSync(
    join(site, "real_dist-2.0.dist-info", "METADATA"),
    "Metadata-Version: 2.1\nName: real-dist\nVersion: 2.0\n",
  );
  const started = Date.now();
  const out = await runProbe(localTransport(python), { fast: true, timeoutMs: 30_000 });
  assert.ok(Date.now() - started < 20_000, `took ${Date.now() - started} ms`);
  // The regular one is read beside them (the silent case).
  assert.ok(out.python.distributions.some((d) => d.name === "real-dist" && d.version === "2.0"));
});
