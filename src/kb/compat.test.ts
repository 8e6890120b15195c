import { test } from "node:test";
import { asDriver } from "../../test/support/driver.js";
import assert from "node:assert/strict";
import {
  canRunTarget,
  coverageFor,
  driverSupport,
  parseCodeTarget,
  parseComputeCapability,
} from "./compat.js";

const cc = (text: string) => {
  const parsed = parseComputeCapability(text);
  assert.ok(parsed, text);
  return parsed;
};
const target = (name: string) => {
  const parsed = parseCodeTarget(name);
  assert.ok(parsed, name);
  return parsed;
};

test("parses capabilities in the forms nvidia-smi, torch and users write", () => {
  assert.deepEqual(cc("9.0"), { major: 9, minor: 0 });
  assert.deepEqual(cc("12.1"), { major: 12, minor: 1 });
  assert.deepEqual(cc("sm_121"), { major: 12, minor: 1 });
  assert.deepEqual(cc("sm_90a"), { major: 9, minor: 0 });
  assert.equal(parseComputeCapability("hopper"), null);
  assert.deepEqual(target("compute_120a"), {
    kind: "ptx",
    major: 12,
    minor: 0,
    suffix: "a",
    name: "compute_120a",
  });
  assert.equal(parseCodeTarget("sm_9"), null);
});

test("SASS runs on the same major with an equal or higher minor only", () => {
  assert.equal(canRunTarget(target("sm_80"), cc("8.6")).how, "sass");
  assert.equal(canRunTarget(target("sm_120"), cc("12.1")).how, "sass"); // GB10 runs sm_120 cubins
  assert.equal(canRunTarget(target("sm_100"), cc("10.3")).how, "sass"); // B300 runs sm_100 cubins
  assert.equal(canRunTarget(target("sm_90"), cc("12.0")).runs, false); // never across majors
  assert.equal(canRunTarget(target("sm_86"), cc("8.0")).runs, false); // not downwards
});

test("arch-specific code runs only on its exact capability; family code on the same major upwards", () => {
  assert.equal(canRunTarget(target("sm_90a"), cc("9.0")).how, "sass");
  assert.equal(canRunTarget(target("sm_120a"), cc("12.1")).runs, false);
  assert.equal(canRunTarget(target("sm_100f"), cc("10.3")).how, "sass");
  assert.equal(canRunTarget(target("sm_100f"), cc("11.0")).runs, false);
  assert.equal(canRunTarget(target("compute_90a"), cc("10.0")).runs, false);
});

test("plain PTX is JIT-compiled for any equal or newer GPU", () => {
  assert.equal(canRunTarget(target("compute_120"), cc("12.1")).how, "ptx-jit");
  assert.equal(canRunTarget(target("compute_75"), cc("12.0")).how, "ptx-jit");
  assert.equal(canRunTarget(target("compute_90"), cc("8.9")).runs, false);
});

test("Tegra exceptions: Orin does not take sm_80 cubins", () => {
  assert.equal(canRunTarget(target("sm_80"), cc("8.7")).runs, false);
  assert.equal(canRunTarget(target("sm_87"), cc("8.7")).how, "sass");
});

test("coverage prefers SASS and falls back to PTX", () => {
  const h100Torch = ["sm_75", "sm_80", "sm_86", "sm_90", "sm_100", "sm_120"];
  assert.deepEqual(coverageFor(h100Torch, cc("9.0")), { how: "sass", via: ["sm_90"] });
  assert.equal(
    coverageFor(["sm_50", "sm_60", "sm_70", "sm_75", "sm_80", "sm_86", "sm_90"], cc("12.0")).how,
    "none",
  );
  assert.deepEqual(coverageFor(["sm_90", "compute_90"], cc("12.0")), { how: "ptx-jit", via: ["compute_90"] });
});

test("driver support: native, minor-version compatible, or unsupported", () => {
  const cuda128 = { version: "12.8", minDriverLinux: "570.26", minorCompatMinDriverLinux: "525.60.13" };
  const cuda130 = { version: "13.0", minDriverLinux: "580.65.06", minorCompatMinDriverLinux: "580" };
  assert.equal(driverSupport(asDriver("580.159.04"), cuda128), "native");
  assert.equal(driverSupport(asDriver("535.104.05"), cuda128), "minor-compat");
  assert.equal(driverSupport(asDriver("470.82.01"), cuda128), "unsupported");
  assert.equal(driverSupport(asDriver("575.57.08"), cuda130), "unsupported");
  assert.equal(driverSupport(asDriver("580.159.04"), cuda130), "native");
});
