/**
 * NGC images judged like wheels (queries/ngc.ts ngcImageVerdicts): the image's arch list per platform,
 * whether its CUDA knows the GPU, the driver, the Jetson -igpu images, on the packaged rows and on rows
 * derived from them for cases the real rows do not have.
 */
import { asDriver } from "../../test/support/driver.js";
import { test } from "node:test";
import assert from "node:assert/strict";
import { KnowledgeBase } from "./index.js";
import { loadPackagedData } from "./load.js";
import { findContradictions } from "./integrity.js";
import { judgeNgcImageOn, ngcImageVerdicts } from "./queries/ngc.js";
import type { NgcImageRow } from "./types.js";
import { asCapability } from "../../test/support/capability.js";

const data = loadPackagedData();
const kb = new KnowledgeBase(data);

function row(tag: string): NgcImageRow {
  const found = kb.ngcImage(tag);
  assert.ok(found, `no row ${tag}`);
  return found;
}

function derived(tag: string, change: (image: NgcImageRow) => void): NgcImageRow {
  const copy = structuredClone(row(tag));
  change(copy);
  return copy;
}

function verdict(
  tag: string,
  computeCapability: string,
  cpuArch: "x86_64" | "aarch64",
  driverVersion?: string,
) {
  const choice = kb
    .ngcImageVerdicts({
      computeCapability: asCapability(computeCapability),
      cpuArch,
      driverVersion: driverVersion === undefined ? null : asDriver(driverVersion),
    })
    .find((entry) => entry.image.tag === tag && entry.platform !== "igpu");
  assert.ok(choice, `no verdict for ${tag}`);
  return choice;
}

test("an A100 gets a current image: the newest its driver runs natively, and the newest at all", () => {
  const query = {
    computeCapability: asCapability("8.0"),
    cpuArch: "x86_64" as const,
    driverVersion: asDriver("610.43.03"),
  };
  const newest = kb.newestRunningNgcImage(query)!;
  assert.equal(newest.image.tag, "26.07", "CUDA 13.3's own driver is 610.43.02");
  assert.equal(newest.code.how, "sass");
  assert.deepEqual(newest.code.via, ["sm_80"]);
  assert.equal(newest.code.basis, "image-env");
  assert.equal(newest.driver.support, "native");
  assert.equal(newest.ref, "nvcr.io/nvidia/pytorch:26.07-py3");
  // 26.08 (CUDA 13.4, R615) runs too, under minor-version compatibility: listed, not preferred.
  const v2608 = verdict("26.08", "8.0", "x86_64", "610.43.03");
  assert.equal(v2608.runs, true);
  assert.equal(v2608.driver.support, "minor-compat");
  // Before: only a first-hand A100 run counted, so 26.03 (a run) and 25.04 were all an A100 got.
  const running = kb.ngcImageVerdicts(query).filter((choice) => choice.runs);
  assert.ok(running.length >= 14, running.map((choice) => choice.image.tag).join());
});

test("no SASS and no PTX the GPU can JIT: cannot run, and the reason names the list", () => {
  // V100 (7.0) on 26.08: sm_75 and up, compute_120 only; CUDA 13.4 dropped Volta as well.
  const v100 = verdict("26.08", "7.0", "x86_64", "595.58.03");
  assert.equal(v100.runs, false);
  assert.equal(v100.code.how, "none");
  assert.match(
    v100.reason,
    /26\.08 linux\/amd64 torch arch list sm_75 .* no SASS for 7\.0 and no PTX it can JIT/,
  );
  assert.equal(v100.cuda.knows, false);
  // T4 (7.5): 26.07's read list has sm_75 (silent), the derived 26.05 list leaves 7.5 out.
  assert.equal(verdict("26.07", "7.5", "x86_64", "595.58.03").runs, true);
  const t4 = verdict("26.05", "7.5", "x86_64", "595.58.03");
  assert.equal(t4.runs, false);
  assert.equal(t4.code.basis, "derived");
  assert.equal(t4.derived, true);
});

test("PTX only: runs through JIT with the CUDA's own driver, not under minor-version compatibility", () => {
  const ptxOnly = derived("26.07", (image) => {
    image.archLists = [{ ...image.archLists[0]!, archList: ["sm_80", "compute_90"] }];
  });
  const toolkits = data.cudaToolkits;
  const context = { gpuMinDriver: kb.minDriverForCapability(asCapability("9.0")) };
  const native = judgeNgcImageOn(
    ptxOnly,
    "amd64",
    toolkits,
    { computeCapability: asCapability("9.0"), cpuArch: "x86_64", driverVersion: asDriver("610.43.03") },
    context,
  );
  assert.equal(native.code.how, "ptx-jit");
  assert.equal(native.runs, true);
  const minor = judgeNgcImageOn(
    ptxOnly,
    "amd64",
    toolkits,
    { computeCapability: asCapability("9.0"), cpuArch: "x86_64", driverVersion: asDriver("580.95.05") },
    context,
  );
  assert.equal(minor.runs, false);
  assert.match(minor.reason, /that PTX cannot be JIT-compiled \(it needs 610\.43\.02 or newer\)/);
});

test("a driver below the GPU's own floor is refused for every image (RTX 5070 Ti on 535)", () => {
  const on535 = kb.ngcImageVerdicts({
    computeCapability: asCapability("12.0"),
    cpuArch: "x86_64",
    driverVersion: asDriver("535.104.05"),
  });
  assert.ok(on535.every((choice) => !choice.runs));
  const v2501 = on535.find((choice) => choice.image.tag === "25.01")!;
  assert.match(
    v2501.reason,
    /driver 535\.104\.05 is older than 570\.26, the first driver that supports this GPU/,
  );
  // Silent: the R570 branch runs the CUDA 12.8 images.
  const on570 = kb.ngcImageVerdicts({
    computeCapability: asCapability("12.0"),
    cpuArch: "x86_64",
    driverVersion: asDriver("570.124.06"),
  });
  assert.deepEqual(
    on570.filter((choice) => choice.runs).map((choice) => choice.image.tag),
    ["25.03", "25.02", "25.01"],
  );
});

test("without a driver: the verdict is about the code, and names the driver each image needs", () => {
  const choice = verdict("25.10", "12.1", "aarch64");
  assert.equal(choice.runs, true);
  assert.equal(choice.driver.support, null);
  assert.equal(choice.driver.floor, "580");
  assert.equal(choice.driver.nativeFrom, "580.65.06");
  assert.match(
    choice.reason,
    /driver not given: 25\.10 needs 580 or newer \(CUDA 13\.x minor-version compatibility\)/,
  );
});

test("Jetson -igpu images: Orin gets the JetPack 6 tags, Thor the JetPack 7 ones, a GB10 none", () => {
  const igpu = (cc: string) =>
    kb
      .ngcImageVerdicts({ computeCapability: asCapability(cc), cpuArch: "aarch64" })
      .filter((choice) => choice.platform === "igpu" && choice.runs)
      .map((choice) => choice.image.tag);
  assert.deepEqual(igpu("8.7"), ["25.06", "25.05", "25.04", "25.03", "25.02", "25.01", "24.12", "24.11"]);
  assert.deepEqual(igpu("11.0"), ["26.02", "26.01", "25.12", "25.11", "25.10", "25.09", "25.08"]);
  assert.deepEqual(igpu("12.1"), []);
  const orin = kb
    .ngcImageVerdicts({ computeCapability: asCapability("8.7"), cpuArch: "aarch64" })
    .find((choice) => choice.platform === "igpu" && choice.image.tag === "25.06")!;
  assert.equal(orin.ref, "nvcr.io/nvidia/pytorch:25.06-py3-igpu");
  assert.equal(orin.code.how, "jetpack");
  assert.equal(orin.derived, true);
  assert.equal(orin.driver.support, "jetpack");
  assert.ok(orin.sources.some((source) => /pytorch-jetson-rel/.test(source.url)));
  // Orin does not run the arm64 (SBSA) images, CUDA 12 or 13: NVIDIA keeps it on its own CUDA.
  assert.equal(verdict("26.08", "8.7", "aarch64").runs, false);
  assert.match(verdict("26.08", "8.7", "aarch64").reason, /for Thor \(11\.0\) only/);
  assert.match(verdict("25.05", "8.7", "aarch64").reason, /SBSA CUDA 12\.9, which does not run on a Jetson/);
  // A discrete GPU is never offered an -igpu image.
  assert.ok(
    kb
      .ngcImageVerdicts({ computeCapability: asCapability("12.1"), cpuArch: "aarch64" })
      .every((choice) => choice.platform !== "igpu"),
  );
});

test("an image whose CUDA does not know the GPU cannot run it, even with PTX for an older arch", () => {
  // 24.11 arm64 carries compute_90; CUDA 12.6 compiles nothing for 12.x (and the image warned).
  const gb10 = verdict("24.11", "12.1", "aarch64", "580.95.05");
  assert.equal(gb10.runs, false);
  const noException = derived("24.11", (image) => (image.gpus.exceptions = []));
  const choice = judgeNgcImageOn(noException, "arm64", data.cudaToolkits, {
    computeCapability: asCapability("12.1"),
    cpuArch: "aarch64",
    driverVersion: asDriver("580.95.05"),
  });
  assert.equal(choice.code.how, "ptx-jit");
  assert.equal(choice.cuda.knows, false);
  assert.equal(choice.runs, false);
  assert.match(choice.reason, /CUDA 12\.6 compiles no code for 12\.1/);
  // CUDA 13.3 has no target list of its own: 13.0 and 13.4 both compile sm_110, so 13.3 does (derived).
  const thor = verdict("26.07", "11.0", "aarch64", "580.95.05");
  assert.equal(thor.cuda.knows, true);
  assert.equal(thor.cuda.derived, true);
});

test("every verdict carries the sources it rests on, and the row's own", () => {
  for (const query of [
    { computeCapability: asCapability("8.0"), cpuArch: "x86_64" as const },
    { computeCapability: asCapability("11.0"), cpuArch: "aarch64" as const },
  ])
    for (const choice of ngcImageVerdicts(data.ngcImages, data.cudaToolkits, query)) {
      assert.ok(choice.sources.length > 0, choice.ref);
      const urls = new Set(choice.image.sources.map((source) => source.url));
      for (const source of choice.sources) assert.ok(urls.has(source.url), `${choice.ref}: ${source.url}`);
    }
});

test("kb.ngcRunsOn: which GPUs each platform image runs on, and how", () => {
  const v2608 = kb.ngcRunsOn(row("26.08"));
  const amd = new Map(v2608.amd64.map((entry) => [entry.computeCapability, entry]));
  assert.equal(amd.get("8.0")?.how, "sass");
  assert.equal(amd.get("12.1")?.how, "sass", "sm_120 SASS runs on 12.1");
  assert.equal(amd.get("10.3")?.how, "sass", "sm_100 SASS runs on 10.3");
  assert.equal(amd.has("7.0"), false);
  assert.equal(amd.has("11.0"), false, "the amd64 list has no sm_110");
  assert.ok(v2608.arm64.some((entry) => entry.computeCapability === "11.0"));
  assert.deepEqual(v2608.igpu, [], "no standalone -igpu image from 26.03 on");
  assert.deepEqual(
    kb.ngcRunsOn(row("25.04")).igpu.map((entry) => entry.computeCapability),
    ["8.7"],
  );
});

test("integrity: a derived list must say so, a run must agree with the list, an -igpu image needs its JetPack", () => {
  const unlabelled = derived("25.05", (image) => (image.archLists[0]!.note = "same as 25.04"));
  const contradicted = derived("26.07", (image) => {
    image.gpus.runs.push({
      ...row("26.03").gpus.runs[0]!,
      computeCapability: "7.0",
      gpu: "Tesla V100-SXM2-32GB",
      source: image.sources[0]!.url,
    });
  });
  const jetsonless = derived("25.02", (image) => (image.jetson = null));
  const unpublished = derived("26.01", (image) => {
    image.archLists.push({ ...image.archLists[0]!, platform: "arm64" });
  });
  const problems = findContradictions({
    ...data,
    ngcImages: [unlabelled, contradicted, jetsonless, unpublished],
  });
  const expect = [
    /NGC 25\.05 linux\/amd64 arch list: a derived list must say so first in its note/,
    /NGC 26\.07: a run on Tesla V100-SXM2-32GB \(7\.0\) ran, but its amd64 arch list has no code for it/,
    /NGC 25\.02: an -igpu image without its JetPack statement/,
    /NGC 26\.01 linux\/arm64 arch list: the row does not say that image is published/,
  ];
  for (const pattern of expect)
    assert.ok(
      problems.some((p) => pattern.test(p)),
      `${pattern}\n${problems.join("\n")}`,
    );
});

test("every tag with an -igpu image has its JetPack statement; 24.01 is a row", () => {
  for (const image of data.ngcImages.filter((entry) => entry.platforms.igpu === true))
    assert.ok(image.jetson, image.tag);
  assert.ok(data.ngcImages.filter((entry) => entry.platforms.igpu === true).length >= 15);
  const v2401 = row("24.01");
  assert.equal(v2401.torch, "2.2.0a0+81ea7a4");
  assert.equal(v2401.cuda, "12.3");
  assert.equal(v2401.minDriverLinux, "545.23.06");
  assert.equal(v2401.archLists[0]?.basis, "get-arch-list");
});
