import { test } from "node:test";
import assert from "node:assert/strict";
import { compareImageTags, imageRelease, parseImageTag } from "./image-tag.js";

test("an NGC tag is read from the release, its -py3 / -py3-igpu image, or a reference ending in one", () => {
  for (const [text, variant] of [
    ["25.09", null],
    ["25.09-py3", "py3"],
    ["25.09-py3-igpu", "py3-igpu"],
    ["nvcr.io/nvidia/pytorch:25.09-py3", "py3"],
    ["harbor.corp/nvcr-proxy/nvidia/pytorch:25.09-py3-igpu", "py3-igpu"],
    [" 25.09-py3 ", "py3"],
  ] as const) {
    const tag = parseImageTag(text);
    assert.deepEqual(tag, { year: 25, month: 9, variant }, JSON.stringify(text));
    assert.equal(imageRelease(tag), "25.09", "the release keeps its zero: 25.09, not 25.9");
  }
  for (const text of [
    "",
    "25.9",
    "2025.09",
    "25.09-py2",
    "25.09-igpu",
    "x25.09",
    "25.09-py3-igpu-x",
    "latest",
  ])
    assert.equal(parseImageTag(text), null, JSON.stringify(text));
});

test("tags order by release as numbers: 24.12 < 25.01 < 25.10, the variant aside", () => {
  const sorted = ["25.10", "24.12-py3", "25.01-py3-igpu", "25.09"]
    .map((text) => parseImageTag(text)!)
    .sort(compareImageTags)
    .map(imageRelease);
  assert.deepEqual(sorted, ["24.12", "25.01", "25.09", "25.10"]);
  assert.equal(compareImageTags(parseImageTag("25.09-py3")!, parseImageTag("25.09-py3-igpu")!), 0);
});
