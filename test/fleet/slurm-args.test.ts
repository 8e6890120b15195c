/** The srun and sbatch command lines gpuprep builds (pure), and pyxis detection from srun --help. */
import { test } from "node:test";
import assert from "node:assert/strict";
import {
  srunArgv,
  pyxisAvailable,
  parseSinfo,
  nodeIsAvailable,
  checkSelection,
  type Exec,
} from "../../src/transports/slurm.js";
import { batchScript, sbatchArgv } from "../../src/transports/slurm-batch.js";
import { UserError } from "../../src/errors.js";
import { runCli } from "../support/cli.js";

const selection = {
  partition: "gpu",
  account: "ml",
  time: "10",
  containerImage: "nvcr.io#nvidia/pytorch:25.10-py3",
  containerMounts: "/data:/data",
  extraSrunArgs: ["--gres=gpu:1"],
  allocationWaitSeconds: 30,
};

test("srun: one task per node, labelled, never killed for one node's failure; pyxis and extra args", () => {
  const argv = srunArgv(selection, ["g1", "g2"], false, ["sh", "-c", "X"]);
  assert.deepEqual(argv, [
    "--label",
    "--kill-on-bad-exit=0",
    // A node that fails mid-run ends its own task only (issue 26 item 8).
    "--no-kill",
    "--job-name=gpuprep-fleet",
    "--immediate=30",
    "--nodes=2",
    "--nodelist=g1,g2",
    "--ntasks-per-node=1",
    "--ntasks=2",
    "--partition=gpu",
    "--account=ml",
    "--time=10",
    "--container-image=nvcr.io#nvidia/pytorch:25.10-py3",
    "--container-mounts=/data:/data",
    "--gres=gpu:1",
    "sh",
    "-c",
    "X",
  ]);
  // Inside an allocation: a step, no --immediate.
  assert.ok(!srunArgv(selection, null, true, ["true"]).some((a) => a.startsWith("--immediate")));
});

test("sbatch: the allocation as sbatch arguments, no #SBATCH line; the container on srun, the nodes line", () => {
  const script = batchScript(selection, "abc123", ["sh", "-c", "it's"]);
  assert.doesNotMatch(script, /#SBATCH/);
  assert.match(script, /^printf '@gpuprep %s nodes %s\\n' abc123 /m);
  assert.match(
    script,
    /^srun --nodes="\$SLURM_JOB_NUM_NODES" --ntasks="\$SLURM_JOB_NUM_NODES" --label --kill-on-bad-exit=0 --no-kill --ntasks-per-node=1 '--container-image=nvcr\.io#nvidia\/pytorch:25\.10-py3' --container-mounts=\/data:\/data --gres=gpu:1 sh -c 'it'\\''s'$/m,
  );
  assert.deepEqual(sbatchArgv(selection, ["g1"], "/jobs/gpuprep-fleet-%j.out", "/jobs/s.sbatch"), [
    "--parsable",
    "--job-name=gpuprep-fleet",
    "--output=/jobs/gpuprep-fleet-%j.out",
    "--nodes=1",
    "--nodelist=g1",
    "--ntasks-per-node=1",
    "--ntasks=1",
    "--partition=gpu",
    "--account=ml",
    "--time=10",
    "/jobs/s.sbatch",
  ]);
});

test("a value with a newline (or any control character) is refused before srun or sbatch sees it", () => {
  for (const [field, flag] of [
    ["partition", "--partition"],
    ["time", "--time"],
    ["account", "--account"],
    ["nodelist", "--nodelist"],
    ["containerImage", "--container-image"],
  ] as const) {
    const bad = { ...selection, [field]: "gpu\necho INJECTED > /tmp/x" };
    assert.throws(
      () => checkSelection(bad),
      (error: Error) =>
        error instanceof UserError && error.message.includes(flag) && !error.message.includes("\n"),
    );
  }
  assert.throws(() => checkSelection({ ...selection, extraSrunArgs: ["--gres=gpu:1\r"] }), UserError);
  assert.doesNotThrow(() => checkSelection(selection));
});

test("pyxis is detected from srun --help; sinfo states: * and down/drain mean not available", async () => {
  const help =
    (text: string): Exec =>
    async () => ({ stdout: text, stderr: "", code: 0, signal: null, timedOut: false });
  assert.equal(
    await pyxisAvailable(help("      --container-image=[USER@][REGISTRY#]IMAGE[:TAG]|PATH\n")),
    true,
  );
  assert.equal(
    await pyxisAvailable(help("      --container             Path to OCI container bundle\n")),
    false,
  );
  const nodes = parseSinfo(
    "g1|idle|none\ng2|down*|Not responding\ng3|drained|bad gpu\ng4|mixed|none\ng5|idle*|none\ng1|idle|none\n",
  );
  assert.deepEqual(
    nodes.map((n) => [n.name, nodeIsAvailable(n), n.reason]),
    [
      ["g1", true, null],
      ["g2", false, "Not responding"],
      ["g3", false, "bad gpu"],
      ["g4", true, null],
      ["g5", false, null],
    ],
  );
});

test("fleet --submit with a newline in --partition or --job-dir: exit 2, one line, nothing submitted", () => {
  for (const args of [
    ["--partition", "gpu\ntouch /tmp/gpuprep-injected"],
    ["--time", "10\n#SBATCH --wrap=id"],
    ["--job-dir", "/tmp/a\nb"],
  ]) {
    const result = runCli(["fleet", "doctor", "--slurm", "--submit", ...args]);
    assert.equal(result.code, 2, result.stderr);
    assert.match(
      result.stderr,
      /^gpuprep: error: fleet: --(partition|time|job-dir) ".*" holds a control character/,
    );
  }
});
