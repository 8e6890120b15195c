/** The node wrapper run for real by sh (no Slurm needed): framing, limits, caps, forgery, cut-offs. */
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import {
  nodeWrapperArgv,
  parseFrames,
  pythonBootstrap,
  frameRunResult,
} from "../../src/transports/node-frame.js";
import { nodeRunsFromOutput } from "../../src/transports/slurm.js";

function runWrapped(nonce: string, limit: number, command: string[], env: NodeJS.ProcessEnv = {}) {
  const argv = nodeWrapperArgv(nonce, limit, command);
  const run = spawnSync(argv[0] as string, argv.slice(1), {
    encoding: "utf8",
    env: { ...process.env, ...env },
  });
  return run.stdout;
}

/** What srun --label does to a stream: a rank prefix, lines cut into 1024-byte pieces. */
function srunLabel(rank: number, text: string): string {
  return text
    .split("\n")
    .flatMap((line) => (line.match(/.{1,1024}/g) ?? [""]).map((piece) => `${rank}: ${piece}`))
    .join("\n");
}

test("a real python3 through the bootstrap: argv, __file__, stdout and stderr come back whole", () => {
  const script =
    'import sys\nprint("argv", sys.argv[1:], __file__.endswith("gpuprep_main.py"))\nprint("x" * 300000)\nsys.stderr.write("e" * 40000)\nsys.exit(3)\n';
  const out = runWrapped("n0nce", 30, ["python3", "-c", pythonBootstrap(script), "a b", "--flag"], {
    GPUPREP_NODE: "node-a",
  });
  const frame = parseFrames(out, "n0nce", false).frames.get("0");
  assert.equal(frame?.node, "node-a");
  assert.equal(frame?.exitCode, 3);
  assert.equal(frame?.complete, true);
  assert.match(frame?.stdout ?? "", /^argv \['a b', '--flag'\] True\n/);
  assert.equal((frame?.stdout.match(/x/g) ?? []).length, 300000);
  // stderr keeps its tail only (16 KiB).
  assert.equal(frame?.stderr.length, 16384);
});

test("the per-node limit kills a hang; frames survive srun's labels and 1024-byte line pieces", () => {
  const hang = runWrapped("abc", 1, ["sh", "-c", "echo started; sleep 30"], { SLURMD_NODENAME: "n4" });
  const ok = runWrapped("abc", 10, ["sh", "-c", "head -c 200000 /dev/zero | tr '\\0' y"], {
    SLURMD_NODENAME: "n1",
  });
  const mixed = [
    srunLabel(0, ok),
    "srun: error: n9: task 2: Exited with exit code 1",
    srunLabel(1, hang),
  ].join("\n");
  const runs = nodeRunsFromOutput(mixed, "", "abc", ["n1", "n4", "n9"], 1, false);
  const byNode = Object.fromEntries(runs.map((r) => [r.node, r]));
  assert.equal(byNode["n1"]?.state, "ran");
  assert.equal(byNode["n1"]?.result?.stdout.length, 200000);
  assert.equal(byNode["n4"]?.state, "hung");
  assert.match(byNode["n4"]?.reason ?? "", /killed at the 1s per-node limit/);
  assert.equal(byNode["n9"]?.state, "unreachable");
  assert.match(byNode["n9"]?.reason ?? "", /n9: task 2: Exited/);
});

test("a node cannot forge frames: its output travels as base64; other nonces and cut frames are not results", () => {
  const forged = runWrapped(
    "real",
    10,
    ["sh", "-c", "printf '@gpuprep real end\\n@gpuprep real rc 0 1\\n'; exit 7"],
    { SLURMD_NODENAME: "n1" },
  );
  const frame = parseFrames(forged, "real", false).frames.get("0");
  assert.equal(frame?.exitCode, 7);
  assert.equal(frame?.stdout, "@gpuprep real end\n@gpuprep real rc 0 1\n");
  assert.equal(parseFrames(forged, "other", false).frames.size, 0);
  // Cut off before the end (srun killed): hung when the carrier was killed at the deadline.
  const cut = forged.split("\n").slice(0, 3).join("\n");
  const runs = nodeRunsFromOutput(srunLabel(0, cut), "", "real", ["n1"], 10, true);
  assert.equal(runs[0]?.state, "hung");
  // A frame whose data is not base64.
  const broken = parseFrames(
    "@gpuprep z begin n1\n@gpuprep z rc 0 5\n@gpuprep z enc o gzip\n@gpuprep z o !!!!\n@gpuprep z end\n",
    "z",
    false,
  ).frames.get("0");
  assert.match(broken?.decodeError ?? "", /stdout frame unreadable/);
  assert.equal(frameRunResult(broken!, 10).code, 0);
});
