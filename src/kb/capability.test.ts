import { test } from "node:test";
import assert from "node:assert/strict";
import { rowCapability } from "./capability.js";

test("a KB row's capability is parsed once and the same value handed out; text the schema refuses throws", () => {
  assert.equal(rowCapability("9.0"), rowCapability("9.0"));
  assert.deepEqual(rowCapability("11.0"), { major: 11, minor: 0 });
  assert.throws(() => rowCapability("sm_90x"), /not a compute capability/);
});
