/**
 * gpuprep scan of container images from a real engine and a real registry: test/e2e/images.sh
 * (its own engine, an image built FROM scratch with a whiteout, docker save, Debian's
 * docker-registry with token auth). Needs root, docker.io and docker-registry: runs on CI (.ci/run
 * installs them) or with GPUPREP_DOCKER_E2E=1.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";

const script = fileURLToPath(new URL("../../../test/e2e/images.sh", import.meta.url));
const wanted = process.env["CI"] === "true" || process.env["GPUPREP_DOCKER_E2E"] === "1";

test(
  "images e2e: a docker save archive and a registry image (anonymous token) scanned alike, whiteouts honoured",
  { skip: wanted ? false : "set GPUPREP_DOCKER_E2E=1 (root, docker.io, docker-registry) to run" },
  () => {
    const result = spawnSync("bash", [script], { encoding: "utf8", timeout: 10 * 60_000 });
    assert.equal(result.status, 0, `${result.stderr.slice(-4000)}`);
    assert.match(
      result.stdout,
      /images e2e: ok \(docker save archive and registry with token auth: 3 libraries, 1 whiteout/,
    );
  },
);
