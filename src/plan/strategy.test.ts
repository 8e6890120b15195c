import { test } from "node:test";
import assert from "node:assert/strict";
import { decideStrategy, type StrategyInputs } from "./strategy.js";

const both: StrategyInputs = {
  asked: "auto",
  imageChosen: true,
  pinExcludesImages: false,
  nativeChosen: true,
  containerDrops: 0,
  nativeDrops: 0,
  imageLag: 1,
  maxImageLag: 2,
};

test("auto: an image that runs and is recent wins; one too far behind loses to native", () => {
  assert.deepEqual(decideStrategy(both), { ok: true, strategy: "container", reason: "image-runs" });
  assert.deepEqual(decideStrategy({ ...both, imageLag: 3 }), {
    ok: true,
    strategy: "native",
    reason: "image-too-old",
  });
  assert.deepEqual(decideStrategy({ ...both, imageLag: Infinity, nativeChosen: false }), {
    ok: true,
    strategy: "container",
    reason: "image-runs",
  });
});

test("auto: the plan that keeps every pin wins", () => {
  assert.deepEqual(decideStrategy({ ...both, containerDrops: 1 }), {
    ok: true,
    strategy: "native",
    reason: "container-drops-pins",
  });
  assert.deepEqual(decideStrategy({ ...both, nativeDrops: 1, imageLag: 5 }), {
    ok: true,
    strategy: "container",
    reason: "native-drops-pins",
  });
  // Both drop something: the pin count does not decide, the image's recency does.
  assert.equal(decideStrategy({ ...both, containerDrops: 1, nativeDrops: 1 }).ok && "container", "container");
});

test("auto without an image: native, saying whether the pin or the GPU excluded the images", () => {
  assert.deepEqual(decideStrategy({ ...both, imageChosen: false, pinExcludesImages: true }), {
    ok: true,
    strategy: "native",
    reason: "pin-excludes-images",
  });
  assert.deepEqual(decideStrategy({ ...both, imageChosen: false }), {
    ok: true,
    strategy: "native",
    reason: "no-image",
  });
  assert.deepEqual(decideStrategy({ ...both, imageChosen: false, nativeChosen: false }), {
    ok: false,
    failure: "nothing-runs",
  });
});

test("asked: the asked strategy or a failure naming why, never the other strategy", () => {
  assert.deepEqual(decideStrategy({ ...both, asked: "native", containerDrops: 0, nativeDrops: 3 }), {
    ok: true,
    strategy: "native",
    reason: "asked",
  });
  assert.deepEqual(
    decideStrategy({ ...both, asked: "container", imageChosen: false, pinExcludesImages: true }),
    {
      ok: false,
      failure: "pin-excludes-every-image",
    },
  );
  assert.deepEqual(decideStrategy({ ...both, asked: "container", imageChosen: false }), {
    ok: false,
    failure: "no-image-runs",
  });
  assert.deepEqual(decideStrategy({ ...both, asked: "native", nativeChosen: false }), {
    ok: false,
    failure: "no-native-build",
  });
});
