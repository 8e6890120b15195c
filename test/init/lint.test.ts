/**
 * Every generated file checked by a real tool: the Dockerfile by dockerfile-utils (the linter of
 * the VS Code Docker extension), compose.yaml by the Compose Specification schema and by
 * `docker-compose config`, devcontainer.json by its schema, pyproject.toml's [tool.uv] table by
 * uv's own settings schema, the scripts by shellcheck. Runs over
 * the examples' expected/ files (which golden.test keeps equal to what init writes) and over a
 * project generated with every option.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { parse as parseYaml } from "yaml";
import { copyExample, exampleNames, examplesDir, runInit } from "./helpers.js";
import { lintDir } from "./lint-dir.js";

for (const name of exampleNames()) {
  test(`lint: examples/${name}/expected`, (t) => lintDir(join(examplesDir, name, "expected"), t));
}

test("lint: a project generated with every option", (t) => {
  const dir = copyExample("vision-training-rtx-5070-ti");
  mkdirSync(join(dir, "wheelhouse"));
  writeFileSync(join(dir, "requirements.txt"), "xformers>=0.0.30\nrich\n");
  const args = [
    "--project",
    dir,
    "--target",
    "dgx-spark",
    "--driver",
    "580.95.05",
    "--strategy",
    "container",
    "--jupyter",
  ];
  args.push("--volume", "/srv/datasets:/datasets:ro", "--shm-size", "32g", "--wheelhouse", "wheelhouse");
  args.push("--build-from-source", "xformers");
  const result = runInit(args);
  assert.equal(result.code, 0, result.stderr);
  lintDir(dir, t);
  const dockerfile = readFileSync(join(dir, "Dockerfile"), "utf8");
  assert.match(dockerfile, /--mount=type=bind,source=wheelhouse,target=\/wheelhouse/);
  assert.match(dockerfile, /ENV TORCH_CUDA_ARCH_LIST="12\.1"/);
  const compose = parseYaml(readFileSync(join(dir, "compose.yaml"), "utf8")) as {
    services: Record<string, Record<string, unknown>>;
  };
  assert.equal(compose.services["app"]?.["shm_size"], "32g");
  assert.equal(compose.services["app"]?.["ipc"], undefined);
  assert.ok((compose.services["app"]?.["volumes"] as string[]).includes("/srv/datasets:/datasets:ro"));
});
