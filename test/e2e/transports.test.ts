/**
 * doctor and validate through the Docker transports against real containers:
 * test/e2e/transports.sh (its own engine, a Debian + torch image, a running container). Needs
 * root, docker.io and debootstrap: runs on CI (.ci/run installs them) or with GPUPREP_DOCKER_E2E=1.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";

const script = fileURLToPath(new URL("../../../test/e2e/transports.sh", import.meta.url));
const wanted = process.env["CI"] === "true" || process.env["GPUPREP_DOCKER_E2E"] === "1";

test(
  "transports e2e: doctor --container, validate --container, memory --container and doctor --image run inside real containers",
  { skip: wanted ? false : "set GPUPREP_DOCKER_E2E=1 (root, docker.io, debootstrap) to run" },
  () => {
    const result = spawnSync("bash", [script], { encoding: "utf8", timeout: 15 * 60_000 });
    assert.equal(result.status, 0, `${result.stderr.slice(-4000)}`);
    assert.match(result.stdout, /transports e2e: ok \(doctor, validate and memory inside /);
  },
);
