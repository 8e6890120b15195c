/**
 * The knowledge-base overlay (`gpuprep kb update`) changes answers, so every report says when it
 * was merged (JSON: `kbOverlay` in the envelope; doctor's text: a `kb` line), and --no-overlay
 * (after or before the command) answers from the packaged tables alone.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadPackagedData } from "../../src/kb/load.js";
import { writeOverlay } from "../../src/kb/overlay.js";
import { capturePath } from "../doctor/captures.js";
import { runCli } from "../support/cli.js";
import { schemaErrors } from "../support/json-schemas.js";

function cacheWithOverlay(): { env: NodeJS.ProcessEnv; overlayPath: string } {
  const cacheHome = mkdtempSync(join(tmpdir(), "gpuprep-overlay-"));
  const overlayPath = join(cacheHome, "gpuprep", "kb-overlay.json");
  // What `kb update` writes, through its own writer: one build row as the index listed it.
  const row = structuredClone(loadPackagedData().torchBuilds[0]!);
  writeOverlay(
    {
      format: 1,
      fetchedAt: "2026-11-26T00:00:00Z",
      indexUrl: "https://download.pytorch.org/whl",
      torchBuilds: [row],
    },
    overlayPath,
  );
  return { env: { XDG_CACHE_HOME: cacheHome }, overlayPath };
}

test("an overlay in use is recorded in doctor's JSON and text; --no-overlay leaves it out", () => {
  const { env, overlayPath } = cacheWithOverlay();
  const capture = capturePath("h100-healthy");

  const withOverlay = runCli(["doctor", "--from", capture, "--json"], { env });
  assert.ok(withOverlay.code === 0 || withOverlay.code === 1, withOverlay.stderr);
  const doc = JSON.parse(withOverlay.stdout) as { kbOverlay?: { path: string; torchBuilds: number } };
  assert.equal(doc.kbOverlay?.path, overlayPath);
  assert.equal(doc.kbOverlay?.torchBuilds, 1);
  assert.deepEqual(schemaErrors(doc), [], "the envelope's kbOverlay as schemas/ declares it");

  const text = runCli(["doctor", "--from", capture], { env });
  assert.match(
    text.stdout,
    /\n {2}kb +with the overlay .*kb-overlay\.json \(1 torch builds from https:\/\/download\.pytorch\.org\/whl/,
  );

  for (const args of [
    ["doctor", "--from", capture, "--json", "--no-overlay"],
    ["--no-overlay", "doctor", "--from", capture, "--json"],
  ]) {
    const without = runCli(args, { env });
    assert.ok(without.code === 0 || without.code === 1, without.stderr);
    assert.equal(
      (JSON.parse(without.stdout) as { kbOverlay?: unknown }).kbOverlay,
      undefined,
      args.join(" "),
    );
  }
  assert.doesNotMatch(runCli(["doctor", "--from", capture, "--no-overlay"], { env }).stdout, /\n {2}kb /);
});

test("kb --json records the overlay too, and nothing without one", () => {
  const { env, overlayPath } = cacheWithOverlay();
  const kb = runCli(["kb", "gpu", "H100 SXM", "--json"], { env });
  assert.equal(kb.code, 0, kb.stderr);
  assert.equal((JSON.parse(kb.stdout) as { kbOverlay?: { path: string } }).kbOverlay?.path, overlayPath);
  assert.deepEqual(schemaErrors(JSON.parse(kb.stdout)), []);
  const empty = mkdtempSync(join(tmpdir(), "gpuprep-overlay-none-"));
  const none = runCli(["kb", "gpu", "H100 SXM", "--json"], { env: { XDG_CACHE_HOME: empty } });
  assert.equal(none.code, 0, none.stderr);
  assert.equal((JSON.parse(none.stdout) as { kbOverlay?: unknown }).kbOverlay, undefined);
});
