/** Existing torch routes in pyproject.toml: kept when they reach the planned index, else replaced with the old line shown, or init stops. */
import { test } from "node:test";
import assert from "node:assert/strict";
import { parse } from "smol-toml";
import { UserError } from "../errors.js";
import { rerouteTorchSources } from "./torch-sources.js";

const CU130 = {
  indexName: "pytorch-cu130",
  url: "https://download.pytorch.org/whl/cu130",
  why: "cu130 runs here",
};

/** Plain JSON of a TOML document (smol-toml builds null-prototype tables). */
function toml(text: string): { tool: { uv: { sources: Record<string, unknown> } } } {
  return JSON.parse(JSON.stringify(parse(text))) as { tool: { uv: { sources: Record<string, unknown> } } };
}

function reroute(text: string, target: Parameters<typeof rerouteTorchSources>[4] = CU130) {
  const doc = parse(text) as { tool?: { uv?: { sources?: Record<string, unknown>; index?: unknown[] } } };
  return rerouteTorchSources(
    text,
    doc.tool?.uv?.sources ?? {},
    (doc.tool?.uv?.index ?? []) as Array<{ name?: string; url?: string }>,
    ["torch", "torchvision", "torchaudio"],
    target,
  );
}

const ROUTED = `[project]
name = "p"
version = "0"

[tool.uv.sources]
torch = { index = "old" }  # the team's choice
mylib = { path = "../mylib" }

[[tool.uv.index]]
name = "old"
url = "https://download.pytorch.org/whl/cu118"
`;

test("a route to another index is replaced, the old line kept as a comment, everything else untouched", () => {
  const result = reroute(ROUTED);
  assert.deepEqual(result.replaced, ["torch (was index old (https://download.pytorch.org/whl/cu118))"]);
  const doc = toml(result.content);
  assert.deepEqual(doc.tool.uv.sources["torch"], [{ index: "pytorch-cu130" }]);
  assert.deepEqual(doc.tool.uv.sources["mylib"], { path: "../mylib" });
  assert.match(result.content, /# torch = \{ index = "old" \} {2}# the team's choice\n/);
});

test("a route that already reaches the planned URL is kept as written, whatever the index's name", () => {
  const same = ROUTED.replace("cu118", "cu130/");
  const result = reroute(same);
  assert.deepEqual(result.kept, ["torch"]);
  assert.equal(result.content, same);
});

test("a multi-line entry or a dotted key is not rewritten: init stops with the reason", () => {
  const multi = ROUTED.replace(
    'torch = { index = "old" }  # the team\'s choice',
    'torch = [\n  { index = "old" },\n]',
  );
  assert.throws(
    () => reroute(multi),
    (error) =>
      error instanceof UserError &&
      /routes torch to index old \(https:\/\/download\.pytorch\.org\/whl\/cu118\) \(\[tool\.uv\.sources\]\), and that entry is not one line/.test(
        error.message,
      ),
  );
  const dotted = `[project]\nname = "p"\nversion = "0"\n[tool.uv]\nsources.torch = { git = "https://github.com/pytorch/pytorch" }\n`;
  assert.throws(() => reroute(dotted), /routes torch to git https:\/\/github\.com\/pytorch\/pytorch/);
});

test("offline (--wheelhouse): the route is disabled, since uv --no-index could not reach it", () => {
  const result = reroute(ROUTED, { offline: "wheelhouse" });
  const doc = toml(result.content);
  assert.equal(doc.tool.uv.sources["torch"], undefined);
  assert.match(
    result.content,
    /# gpuprep init disabled this route: an offline build \(--wheelhouse\) takes torch from wheelhouse\//,
  );
});
