/**
 * The real build: test/init/e2e/docker-e2e.sh (Docker engine, stand-in NGC base, offline build,
 * generated run script, probe inside). Needs root, dockerd and debootstrap: runs on CI (.ci/run
 * installs them) or with GPUPREP_DOCKER_E2E=1; skipped elsewhere.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { repoRoot } from "./helpers.js";

const wanted = process.env["CI"] === "true" || process.env["GPUPREP_DOCKER_E2E"] === "1";

test(
  "docker e2e: init's Dockerfile builds offline on a stand-in NGC base and the run script starts it",
  {
    skip: wanted
      ? false
      : "set GPUPREP_DOCKER_E2E=1 to run (as root, after apt-get install docker.io debootstrap)",
  },
  () => {
    const result = spawnSync("bash", [join(repoRoot, "test", "init", "e2e", "docker-e2e.sh")], {
      encoding: "utf8",
      timeout: 20 * 60_000,
    });
    assert.equal(result.status, 0, `${result.stderr.slice(-4000)}`);
    assert.match(result.stdout, /docker e2e: ok \(base torch \S+ kept/);
  },
);
