/**
 * The five stories (../shared/seeds; issue 22 item 10), end to end. Each examples/seed-* holds its
 * author's project as it was before gpuprep (its README says where each line comes from). For each,
 * `gpuprep init` runs for the story's machine with the strategy the author reached by hand and with
 * auto, into a copy of the example; then the script it wrote runs with stand-in docker, uv, pixi,
 * conda, git, nvcc and nvidia-smi that log what they are asked (standins.ts). Each check
 * (story-checks.ts) is one subtest named after what the story needs and where that is written
 * down; while gpuprep does not do it, that subtest fails with what it found. Checks a plan never
 * reached (init wrote none) are skipped under the failing "init writes a plan".
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { checkStory, STORIES } from "./story-checks.js";
import { dockerignoreExcludes, satisfies } from "./story-files.js";

for (const story of STORIES)
  for (const strategy of story.strategies)
    test(`story ${story.example}: init --strategy ${strategy}, then its script`, (t) =>
      checkStory(t, story, strategy));

// The oracles themselves, each with a firing and a silent case.
test("stories: the .dockerignore reader follows Docker's rules (last match wins, parents count, ** crosses /)", () => {
  const allowlist = "*\n!gpuprep-requirements.txt\n**/.env*\n";
  assert.ok(dockerignoreExcludes(allowlist, ".venv/bin/python"));
  assert.ok(!dockerignoreExcludes(allowlist, "gpuprep-requirements.txt"));
  assert.ok(dockerignoreExcludes(allowlist, "sub/.env.local"));
  assert.ok(
    !dockerignoreExcludes("__pycache__/\n.git\n", ".pixi/envs/default/bin/python"),
    "a denylist without .pixi lets it in",
  );
  assert.ok(
    dockerignoreExcludes(".pixi/\n", ".pixi/envs/default/bin/python"),
    "a parent directory's pattern counts",
  );
});

test("stories: the specifier reader (release versions only)", () => {
  assert.ok(satisfies("3.13", ">=3.9,<3.14") && !satisfies("3.14", ">=3.9,<3.14"));
  assert.ok(satisfies("2.9.1", "2.9.*") && !satisfies("2.10.0", "2.9.*"));
  assert.ok(satisfies("2.5.1", "==2.5.1") && !satisfies("2.5.10", "==2.5.1"));
  assert.ok(satisfies("1.26.4", ">=1.19,<2") && !satisfies("1.26.4", "==2.2.6"));
  assert.ok(satisfies("3.9.7", "3.9.*") && satisfies("3.9.7", "3.9") && !satisfies("3.10", "3.9"));
});
