import { test } from "node:test";
import assert from "node:assert/strict";
import { mirroredRef, parseRegistryMirror } from "./base-image.js";

test("--registry-mirror takes a registry host, a port and a path, and nothing else", () => {
  for (const [text, parsed] of [
    ["harbor.corp/nvcr-proxy", "harbor.corp/nvcr-proxy"],
    ["harbor.corp/nvcr-proxy/", "harbor.corp/nvcr-proxy"],
    ["127.0.0.1:5000", "127.0.0.1:5000"],
    ["localhost:5000/mirror", "localhost:5000/mirror"],
    ["registry.example.com:443/a/b", "registry.example.com:443/a/b"],
    ["registry:5000", "registry:5000"],
    ["[::1]:5000", "[::1]:5000"],
  ] as const)
    assert.equal(parseRegistryMirror(text), parsed, text);
  for (const text of [
    "https://harbor.corp",
    "harbor",
    "harbor.corp/Nvcr",
    "harbor.corp/x:tag",
    "harbor.corp/x@sha256:0",
    "a b.c",
    "harbor.corp:port",
    "harbor.corp/../x",
    "",
  ])
    assert.equal(parseRegistryMirror(text), null, text);
});

test("a mirrored reference keeps the NGC path and tag, -igpu included", () => {
  assert.equal(
    mirroredRef("nvcr.io/nvidia/pytorch:25.11-py3", "harbor.corp/nvcr-proxy"),
    "harbor.corp/nvcr-proxy/nvidia/pytorch:25.11-py3",
  );
  assert.equal(
    mirroredRef("nvcr.io/nvidia/pytorch:25.08-py3-igpu", "127.0.0.1:5000"),
    "127.0.0.1:5000/nvidia/pytorch:25.08-py3-igpu",
  );
});
