/**
 * One payload frame for the probe, validate and memory (issue 23 item 5), authenticated by a
 * nonce that travels on a channel of its own, never argv (issue 28 low: "the nonce is in argv and
 * the last frame wins, so a .pth/atexit hook can report a healthy H100").
 *
 * The hook here is the generic one: at interpreter start (a .pth line in the venv) it collects
 * every hex word of 16-64 characters it can see in sys.argv, os.environ and /proc/self/cmdline,
 * prints a forged frame for each payload with each of them at once, and registers an atexit
 * handler that prints them again after the payload's own. The real result must win every time.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { readFrame, frameChannel, payloadErrorKinds } from "../../src/transports/payload-frame.js";
import { localTransport } from "../../src/transports/local.js";
import { runProbe } from "../../src/gather/probe.js";
import { runPayload } from "../../src/validate/payload.js";
import { runPidMemory } from "../../src/memory/payload.js";
import { makeVenv } from "../support/venv.js";

const N = "0123456789abcdef01";

test("readFrame: the first valid frame with this nonce and payload wins", () => {
  const frame = (nonce: string, payload: string, json: string) =>
    `@gpuprep-frame ${nonce} ${payload} ${json}`;
  const out = [
    '{"host": "not framed"}',
    frame("ffffffffffffffffff", "probe", '{"n": 0}'),
    frame(N, "memory", '{"n": 1}'),
    frame(N, "probe", "{broken"),
    frame(N, "probe", "[1, 2]"),
    `  ${frame(N, "probe", '{"n": 2}')}`,
    frame(N, "probe", '{"n": 3}'),
    frame(N, "probe", '{"n": 4}'),
  ].join("\n");
  assert.deepEqual(readFrame(out, N, "probe"), { n: 3 });
  assert.deepEqual(readFrame(out, N, "memory"), { n: 1 });
  assert.equal(readFrame(out, N, "validate"), null);
  assert.equal(readFrame(out, "ffffffffffffffffff", "memory"), null);
  // A nonce that is not one of ours (empty, short, not hex) never matches, even a line made for it.
  for (const bad of ["", "-", "abc", "0123456789ABCDEF01", "0123456789abcdefg1"])
    assert.equal(readFrame(frame(bad, "probe", "{}"), bad, "probe"), null, bad);
});

test("the local channel is fd 3, the others carry the nonce in the script text, none in argv", () => {
  const local = frameChannel({ kind: "local" });
  assert.equal(local.header, 'GPUPREP_FRAME_CHANNEL = "fd:3"\n');
  assert.deepEqual(local.runOptions, { secret: local.nonce });
  const remote = frameChannel({ kind: "ssh" });
  assert.equal(remote.header, `GPUPREP_FRAME_CHANNEL = "nonce:${remote.nonce}"\n`);
  assert.deepEqual(remote.runOptions, {});
  assert.notEqual(local.nonce, remote.nonce);
  assert.match(local.nonce, /^[0-9a-f]{16,64}$/);
});

test("the error kinds table: every kind memory.py raises is in it, and the CLI's input kinds come from it", () => {
  const kinds = payloadErrorKinds();
  for (const kind of [
    "request",
    "no-torch",
    "no-transformers",
    "no-cuda",
    "config",
    "factory",
    "lora",
    "unsupported",
  ])
    assert.equal(kinds[kind]?.input, true, kind);
  for (const kind of ["checkpointing", "pid", "internal"]) assert.equal(kinds[kind]?.input, false, kind);
});

/** A venv whose startup hook forges frames from every hex word it can see, now and at exit. */
function spoofingVenv(): string {
  const [python, site] = makeVenv("gpuprep-frame-spoof-");
  writeFileSync(join(site, "spoof.pth"), "import spoof_frames\n");
  writeFileSync(
    join(site, "spoof_frames.py"),
    [
      "import atexit, os, re, sys",
      "seen = ' '.join(sys.argv) + ' ' + ' '.join('%s=%s' % kv for kv in os.environ.items())",
      "try:",
      "    seen += open('/proc/self/cmdline').read().replace('\\0', ' ')",
      "except OSError:",
      "    pass",
      "words = set(re.findall(r'[0-9a-f]{16,64}', seen))",
      'FAKE = {\'probe\': \'{"host": {"hostname": "spoofed"}}\', \'validate\': \'{"schema": "spoofed"}\',',
      '        \'memory\': \'{"status": "ok", "pid": 1, "usedBytes": 666}\'}',
      "def forge():",
      "    for word in words:",
      "        for payload, doc in FAKE.items():",
      "            os.write(1, ('\\n@gpuprep-frame %s %s %s\\n' % (word, payload, doc)).encode())",
      "forge()",
      "atexit.register(forge)",
      "",
    ].join("\n"),
  );
  return python;
}

test("probe: a .pth hook forging frames from argv, the environment and cmdline, at start and at exit, changes nothing", async () => {
  const python = spoofingVenv();
  const out = await runProbe(localTransport(python), { fast: true, timeoutMs: 30_000 });
  assert.notEqual(out.host.hostname, "spoofed");
  assert.equal(out.python.interpreter.executable, python);
});

test("validate: the same hook cannot pass for the payload's result", async () => {
  const python = spoofingVenv();
  const payload = await runPayload(python, { only: ["checks"], extensions: [] }, 120_000);
  assert.equal(payload.schema, "gpuprep.validate.payload");
});

test("memory: the same hook cannot pass for the payload's result", async () => {
  const python = spoofingVenv();
  // --pid of a process with no GPU memory: the real answer is an error, the forged one 666 bytes.
  await assert.rejects(runPidMemory(localTransport(python), process.pid, 30_000), (error: unknown) => {
    assert.doesNotMatch(String(error), /666/);
    return true;
  });
});
