/**
 * issue 17: when docker or ssh itself fails, its own first line is the error: real clients, no
 * daemon at the socket given (DOCKER_HOST), a host name that cannot resolve (.invalid, RFC 2606).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { requireBinary, runCli } from "../support/cli.js";

const NO_DAEMON = { DOCKER_HOST: "unix:///nonexistent-gpuprep-test.sock" };

function assertOneLineError(
  result: { code: number | null; stdout: string; stderr: string },
  pattern: RegExp,
) {
  assert.equal(result.code, 2, result.stderr);
  assert.equal(result.stdout, "");
  const lines = result.stderr.trimEnd().split("\n");
  assert.equal(lines.length, 2, result.stderr);
  assert.match(lines[0]!, pattern);
  assert.match(lines[1]!, /^ {2}hint: try it by hand: /);
}

test("doctor --image with no Docker daemon: docker's own 'Cannot connect to the Docker daemon', not its usage line", () => {
  requireBinary("docker", "docker.io (the client is enough)");
  const result = runCli(["doctor", "--image", "gpuprep-test/none:1"], { env: NO_DAEMON });
  assertOneLineError(
    result,
    /^gpuprep: error: docker could not start python3 in a new container of image gpuprep-test\/none:1: docker: Cannot connect to the Docker daemon at unix:\/\/\/nonexistent-gpuprep-test\.sock/,
  );
  assert.doesNotMatch(result.stderr, /--help/);
});

test("doctor --container with no Docker daemon: docker's own line (docker exec exits 1, like a Python could)", () => {
  requireBinary("docker", "docker.io (the client is enough)");
  const result = runCli(["doctor", "--container", "gpuprep-test-none"], { env: NO_DAEMON });
  assertOneLineError(
    result,
    /docker could not start python3 in container gpuprep-test-none: Cannot connect to the Docker daemon/,
  );
});

test("doctor --ssh to a name that cannot resolve: ssh's own first line", () => {
  requireBinary("ssh", "openssh-client");
  const result = runCli(["doctor", "--ssh", "gpuprep-test.invalid"]);
  assertOneLineError(
    result,
    /^gpuprep: error: ssh could not reach gpuprep-test\.invalid: ssh: .*gpuprep-test\.invalid/,
  );
  assert.match(result.stderr, /Could not resolve hostname|Name or service not known|resolution/);
});
