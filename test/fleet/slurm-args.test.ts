/** The srun and sbatch command lines gpuprep builds (pure), and pyxis detection from srun --help. */
import { test } from "node:test";
import assert from "node:assert/strict";
import {
  srunArgv,
  pyxisAvailable,
  parseSinfo,
  nodeIsAvailable,
  type Exec,
} from "../../src/transports/slurm.js";
import { batchScript } from "../../src/transports/slurm-batch.js";

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

test("sbatch script: allocation options as #SBATCH lines, the container on srun, the nodes line", () => {
  const script = batchScript(selection, null, "abc123", "/jobs/gpuprep-fleet-%j.out", ["sh", "-c", "it's"]);
  assert.match(
    script,
    /^#!\/bin\/sh\n#SBATCH --job-name=gpuprep-fleet\n#SBATCH --output=\/jobs\/gpuprep-fleet-%j\.out\n/,
  );
  assert.match(script, /^#SBATCH --partition=gpu$/m);
  assert.doesNotMatch(script, /^#SBATCH --container/m);
  assert.match(script, /^printf '@gpuprep %s nodes %s\\n' abc123 /m);
  assert.match(
    script,
    /^srun --label --kill-on-bad-exit=0 '--container-image=nvcr\.io#nvidia\/pytorch:25\.10-py3' --container-mounts=\/data:\/data --gres=gpu:1 sh -c 'it'\\''s'$/m,
  );
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
