/** The real tools behind lint.test.ts, shared with the hardening tests (hostile input must lint too). */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { createRequire } from "node:module";
import { validate as lintDockerfile } from "dockerfile-utils";
import { parse as parseYaml } from "yaml";
import { parse as parseToml } from "smol-toml";
import { repoRoot } from "./helpers.js";
import { DOCKER_COMPOSE, SHELLCHECK, missing, onCi, type Part } from "../support/needs.js";

const require = createRequire(import.meta.url);
const Ajv = require("ajv").default as typeof import("ajv").default;
const Ajv2019 = require("ajv/dist/2019").default as typeof import("ajv").default;
const addFormats = require("ajv-formats").default as (ajv: unknown) => void;

const schemas = join(repoRoot, "test", "init", "schemas");
const readJson = (path: string) => JSON.parse(readFileSync(path, "utf8")) as Record<string, unknown>;

const composeAjv = new Ajv({ strict: false, allErrors: true });
addFormats(composeAjv);
// The compose schema names its draft as "https://json-schema.org/draft-07/schema", a spelling Ajv
// does not register; it is draft-07, which Ajv's default class validates.
const { $schema: _composeDraft, ...composeSchema } = readJson(join(schemas, "compose-spec.json"));
const validateCompose = composeAjv.compile(composeSchema);
const devAjv = new Ajv2019({ strict: false, allErrors: true });
addFormats(devAjv);
const validateDevcontainer = devAjv.compile(readJson(join(schemas, "devContainer.base.schema.json")));
const uvAjv = new Ajv({ strict: false, allErrors: true });
addFormats(uvAjv);
// uv's schema (generated from Rust types) marks unsigned integers with a "uint" format.
uvAjv.addFormat("uint", {
  type: "number",
  validate: (n: number) => Number.isInteger(n) && n >= 0,
});
const validateUvSettings = uvAjv.compile(readJson(join(schemas, "uv.schema.json")));

/**
 * A tool CI installs (.ci/run): missing fails on CI; elsewhere the check is left out, and a
 * diagnostic names the package (the rest of the lint still runs).
 */
function haveTool(part: Part, t: { diagnostic: (m: string) => void }): boolean {
  const why = missing(part);
  if (why === null) return true;
  if (onCi()) assert.fail(`${why} (.ci/run installs it on CI)`);
  t.diagnostic(`${why}: that check was left out`);
  return false;
}

/**
 * @param composeConfig false where the project's own path cannot pass `docker-compose config`
 *   (v1 splits a resolved `./x:/y` at a newline in the directory name; the file itself is fine).
 */
export function lintDir(
  dir: string,
  t: { skip: (m: string) => void; diagnostic: (m: string) => void },
  composeConfig = true,
) {
  const dockerfile = join(dir, "Dockerfile");
  if (existsSync(dockerfile)) {
    const problems = lintDockerfile(readFileSync(dockerfile, "utf8"));
    assert.deepEqual(
      problems.map(
        (p) => `${p.range.start.line + 1}: ${typeof p.message === "string" ? p.message : p.message.value}`,
      ),
      [],
      "Dockerfile lint",
    );
  }
  const compose = join(dir, "compose.yaml");
  if (existsSync(compose)) {
    const ok = validateCompose(parseYaml(readFileSync(compose, "utf8")));
    assert.ok(
      ok,
      `compose.yaml against the Compose Specification: ${JSON.stringify(validateCompose.errors)}`,
    );
    if (composeConfig && haveTool(DOCKER_COMPOSE, t)) {
      const result = spawnSync("docker-compose", ["-f", compose, "config", "-q"], {
        encoding: "utf8",
        env: { ...process.env, HOME: "/home/ci" },
      });
      assert.equal(result.status, 0, `docker-compose config: ${result.stderr}`);
    }
  }
  const devcontainer = join(dir, ".devcontainer", "devcontainer.json");
  if (existsSync(devcontainer)) {
    const ok = validateDevcontainer(readJson(devcontainer));
    assert.ok(ok, `devcontainer.json against its schema: ${JSON.stringify(validateDevcontainer.errors)}`);
  }
  const pyproject = join(dir, "pyproject.toml");
  if (existsSync(pyproject)) {
    const doc = parseToml(readFileSync(pyproject, "utf8")) as { tool?: { uv?: unknown } };
    const ok = validateUvSettings(doc.tool?.uv ?? {});
    assert.ok(
      ok,
      `pyproject.toml [tool.uv] against uv's schema: ${JSON.stringify(validateUvSettings.errors)}`,
    );
  }
  for (const script of ["scripts/run-container.sh", "scripts/setup-native.sh"]) {
    const path = join(dir, script);
    if (!existsSync(path) || !haveTool(SHELLCHECK, t)) continue;
    const result = spawnSync("shellcheck", ["--severity=style", path], { encoding: "utf8" });
    assert.equal(result.status, 0, `shellcheck ${script}:\n${result.stdout}`);
  }
}
