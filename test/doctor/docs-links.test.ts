/**
 * Findings link their rule's page by an absolute URL at this version's tag, in --json and text
 * alike, so the link works after `npm install -g` (a repo-relative path points nowhere there).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { capturePath } from "./captures.js";
import { RULES } from "../../src/rules/registry.js";
import { ruleDocsUrl } from "../../src/findings/types.js";
import { docsUrl } from "../../src/docs-url.js";

const CLI = fileURLToPath(new URL("../../src/cli/main.js", import.meta.url));
const REPO = fileURLToPath(new URL("../../../", import.meta.url));
const MANIFEST = JSON.parse(readFileSync(`${REPO}package.json`, "utf8")) as {
  version: string;
  repository: { type: string; url: string };
  homepage: string;
  bugs: { url: string };
};
/** What the link must start with, built here from package.json's fields. */
const PREFIX = `${MANIFEST.repository.url.replace(/^git\+/, "").replace(/\.git$/, "")}/blob/v${MANIFEST.version}/`;

function doctor(args: string[]) {
  const result = spawnSync(process.execPath, [CLI, "doctor", ...args], {
    encoding: "utf8",
    env: { ...process.env, NO_COLOR: "1" },
  });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

test("package.json names the repository, homepage and bugs on the same GitHub repository", () => {
  assert.equal(MANIFEST.repository.type, "git");
  assert.match(MANIFEST.repository.url, /^git\+https:\/\/github\.com\/[\w.-]+\/[\w.-]+\.git$/);
  const web = MANIFEST.repository.url.replace(/^git\+/, "").replace(/\.git$/, "");
  assert.ok(MANIFEST.homepage.startsWith(web), MANIFEST.homepage);
  assert.equal(MANIFEST.bugs.url, `${web}/issues`);
});

test("every rule's URL is the repository's file at the version tag, and that file exists here", () => {
  for (const rule of RULES) {
    const url = ruleDocsUrl(rule.id);
    assert.ok(url.startsWith(PREFIX), url);
    const path = url.slice(PREFIX.length);
    assert.equal(path, `docs/rules/${rule.id}.md`);
    assert.ok(existsSync(`${REPO}${path}`), `${path} is missing`);
  }
  assert.equal(docsUrl("docs/fleet.md#fleet-allreduce"), `${PREFIX}docs/fleet.md#fleet-allreduce`);
});

test("--json findings carry the absolute URL; the text report prints it", () => {
  const json = doctor(["--from", capturePath("broken-extensions"), "--json"]);
  assert.equal(json.code, 1, json.stderr);
  const findings = (JSON.parse(json.stdout) as { findings: { ruleId: string; docs: string }[] }).findings;
  assert.ok(findings.length > 0);
  for (const finding of findings) assert.equal(finding.docs, `${PREFIX}docs/rules/${finding.ruleId}.md`);

  const text = doctor(["--from", capturePath("broken-extensions")]);
  for (const finding of findings) assert.ok(text.stdout.includes(`docs: ${finding.docs}`), finding.ruleId);
  assert.doesNotMatch(text.stdout, /docs: docs\//, "no repo-relative link left");
});
