/** NGC image rows, the coverage rule and the driver floors, on the packaged rows and on fixtures derived from them. */
import { asDriver } from "../../test/support/driver.js";
import { test } from "node:test";
import assert from "node:assert/strict";
import { KnowledgeBase } from "./index.js";
import { loadPackagedData } from "./load.js";
import { findContradictions } from "./integrity.js";
import { judgeNgcImage, ngcGpuCoverage } from "./queries/ngc.js";
import { satisfies } from "../util/pep440.js";
import { versionParts } from "../util/version.js";
import type { NgcGpuRun, NgcImageRow } from "./types.js";
import { asCapability } from "../../test/support/capability.js";

const data = loadPackagedData();
const kb = new KnowledgeBase(data);
const tegra = data.archs.filter((row) => row.tegra).map((row) => row.computeCapability);

function row(tag: string): NgcImageRow {
  const found = kb.ngcImage(tag);
  assert.ok(found, `no row ${tag}`);
  return found;
}

/** A packaged row with one field changed, for the cases the real rows do not have. */
function derived(tag: string, change: (image: NgcImageRow) => void): NgcImageRow {
  const copy = structuredClone(row(tag));
  change(copy);
  return copy;
}

function coverage(tag: string, cc: string, cpuArch: "x86_64" | "aarch64") {
  const image = row(tag);
  return ngcGpuCoverage(image, data.cudaToolkits, asCapability(cc), cpuArch, tegra);
}

test("every monthly tag from 24.11 to 26.09 is answered except 25.07, each with torch as it prints", () => {
  const expected: string[] = [];
  for (let year = 24; year <= 26; year++)
    for (let month = 1; month <= 12; month++) {
      const tag = `${year}.${String(month).padStart(2, "0")}`;
      if (tag >= "24.11" && tag <= "26.09" && tag !== "25.07") expected.push(tag);
    }
  const tags = data.ngcImages.map((image) => image.tag);
  for (const tag of expected) assert.ok(tags.includes(tag), `missing ${tag}`);
  assert.equal(kb.ngcImage("25.07"), null);
  for (const tag of expected) {
    const image = row(tag);
    assert.equal(image.torchAsPrinted, true, tag);
    assert.match(image.torch, new RegExp(`\\.nv${tag.replace(".", "\\.")}(\\.\\d+)?$`), tag);
  }
  assert.equal(row("25.02").torch, "2.7.0a0+ecf3bae40a.nv25.02");
  assert.equal(row("26.01").torch, "2.10.0a0+a36e1d39eb.nv26.01.42222806");
  assert.equal(kb.ngcImage("nvcr.io/nvidia/pytorch:25.01-py3")?.tag, "25.01");
  assert.equal(kb.ngcImage("25.01-py3-igpu")?.tag, "25.01");
  assert.equal(kb.ngcImage("2.9.0a0+145a3a7bda.nv25.10"), null, "a torch version is not a tag");
});

test("driver floors: CUDA 13 images need the 580 branch, CUDA 12 images their CUDA's GA driver", () => {
  for (const image of data.ngcImages) {
    const major = versionParts(image.cuda)[0];
    if (major === 13) {
      assert.equal(image.minDriverLinux, "580", image.tag);
      assert.equal(image.driverFloorBasis, "cuda-minor-version-compat", image.tag);
    } else if (image.tag >= "24.02") {
      assert.equal(image.minDriverLinux, kb.cudaToolkit(image.cuda)?.minDriverLinux, image.tag);
      assert.equal(image.driverFloorBasis, "cuda-ga-driver", image.tag);
    }
  }
  assert.equal(row("25.10").minDriverLinux, "580");
  assert.equal(row("23.02").minDriverLinux, "525");
});

test("25.01 covers 12.0 on x86_64 through a first-hand run, and nothing on aarch64", () => {
  const x86 = coverage("25.01", "12.0", "x86_64");
  assert.equal(x86.covered, true);
  assert.equal(x86.covered && x86.rule, "run");
  assert.match(x86.detail, /RTX 5090 Laptop GPU \(12\.0, x86_64\)/);
  const arm = coverage("25.01", "12.1", "aarch64");
  assert.equal(arm.covered, false);
  assert.match(arm.detail, /NVIDIA GB10 \(12\.1, aarch64\) detected/);
});

test("25.09 covers GB10 (12.1) on aarch64; an image with no sourced arm64 build is not offered to GB10", () => {
  assert.equal(coverage("25.09", "12.1", "aarch64").covered, true);
  const verdicts = kb.judgeNgcImages({
    computeCapability: asCapability("12.1"),
    driverVersion: asDriver("580.95.05"),
    cpuArch: "aarch64",
  });
  const v2502 = verdicts.find((v) => v.image.tag === "25.02")!;
  assert.equal(v2502.runs, false);
  assert.match(v2502.reason, /no source says a linux\/arm64 image is published for 25\.02/);
  const noArm = derived("25.09", (image) => (image.platforms.arm64 = false));
  const verdict = judgeNgcImage(noArm, data.cudaToolkits, {
    computeCapability: asCapability("12.1"),
    driverVersion: asDriver("580.95.05"),
    cpuArch: "aarch64",
  });
  assert.equal(verdict.runs, false);
  assert.match(verdict.reason, /no linux\/arm64 image is published for 25\.09/);
  // A GPU the image warns about is a known exception, not covered.
  const early = verdicts.find((v) => v.image.tag === "24.11")!;
  assert.equal(early.runs, false);
  assert.match(early.reason, /known exception for compute capability 12\.1: .*not yet supported/);
  assert.deepEqual(
    kb
      .ngcImagesFor({
        computeCapability: asCapability("12.1"),
        driverVersion: asDriver("580.95.05"),
        cpuArch: "aarch64",
      })
      .map((i) => i.tag),
    // 26.08 and 25.10 by their read arm64 arch list, the tags between them by the derived one,
    // 25.09 by a first-hand run; 26.01 is left out (no source says it has an arm64 image).
    ["26.08", "26.07", "26.06", "26.05", "26.04", "26.03", "26.02", "25.12", "25.11", "25.10", "25.09"],
  );
});

test("no CUDA 12 image covers Jetson Thor, and a Thor run on one is refused by integrity", () => {
  for (const image of data.ngcImages.filter((i) => versionParts(i.cuda)[0] === 12))
    for (const cc of ["11.0", "10.1"])
      assert.equal(coverage(image.tag, cc, "aarch64").covered, false, `${image.tag} ${cc}`);
  assert.deepEqual(
    kb
      .ngcImagesFor({
        computeCapability: asCapability("11.0"),
        driverVersion: asDriver("580.95.05"),
        cpuArch: "aarch64",
      })
      .map((i) => i.tag),
    [
      "26.09",
      "26.08",
      "26.07",
      "26.06",
      "26.05",
      "26.04",
      "26.03",
      "26.02",
      "25.12",
      "25.11",
      "25.10",
      "25.08",
    ],
  );
  const thorRun = row("25.08").gpus.runs.find((run) => run.computeCapability === "11.0")!;
  const bad = derived("25.06", (image) => {
    image.platforms.arm64 = true;
    image.gpus.runs.push({ ...thorRun, source: "docs/kb-evidence/ngc-images.md" });
  });
  const problems = findContradictions({ ...data, ngcImages: [bad] });
  assert.ok(
    problems.some((p) => /25\.06: run on NVIDIA Thor \(11\.0\): a CUDA 12 image sees Thor as 10\.1/.test(p)),
    problems.join("\n"),
  );
  assert.ok(
    problems.some((p) => /ran, but CUDA 12\.9 compiles no SASS for it/.test(p)),
    problems.join("\n"),
  );
});

test("a Jetson part is covered only by a run on it, never by a floor", () => {
  // CUDA 12: the arm64 image's SBSA CUDA does not run on a Jetson at all (it has its -igpu image).
  const floored = derived("25.05", (image) => (image.gpus.minComputeCapability = "7.5"));
  const orin = ngcGpuCoverage(floored, data.cudaToolkits, asCapability("8.7"), "aarch64", tegra);
  assert.equal(orin.covered, false);
  assert.match(
    orin.detail,
    /25\.05's linux\/arm64 image carries SBSA CUDA 12\.9, which does not run on a Jetson \(8\.7\)/,
  );
  const a10 = ngcGpuCoverage(floored, data.cudaToolkits, asCapability("8.6"), "aarch64", tegra);
  assert.equal(a10.covered && a10.rule, "stated-floor");
  // CUDA 13: SBSA CUDA runs on Thor only (NVIDIA keeps Orin on its own CUDA), and on Thor only a
  // run on it (or an arch list) counts, never the floor.
  const floored13 = derived("26.09", (image) => (image.gpus.minComputeCapability = "7.5"));
  const orin13 = ngcGpuCoverage(floored13, data.cudaToolkits, asCapability("8.7"), "aarch64", tegra);
  assert.equal(orin13.covered, false);
  assert.match(orin13.detail, /unified SBSA and Jetson CUDA from 13\.0 for Thor \(11\.0\) only/);
  const noThorRun = derived("26.09", (image) => {
    image.gpus.minComputeCapability = "7.5";
    image.gpus.runs = image.gpus.runs.filter((run) => run.computeCapability !== "11.0");
  });
  const thor13 = ngcGpuCoverage(noThorRun, data.cudaToolkits, asCapability("11.0"), "aarch64", tegra);
  assert.equal(thor13.covered, false);
  assert.match(thor13.detail, /11\.0 is a Jetson \(Tegra iGPU\) part/);
});

test("23.02's stated floor covers Hopper on x86_64 but no Blackwell its CUDA 12.0 cannot build", () => {
  const h100 = coverage("23.02", "9.0", "x86_64");
  assert.equal(h100.covered && h100.rule, "stated-floor");
  assert.match(h100.detail, /at or above the stated minimum 6\.0 and CUDA 12\.0 compiles sm_90 SASS/);
  assert.match(coverage("23.02", "12.0", "x86_64").detail, /CUDA 12\.0 compiles no SASS that runs on 12\.0/);
  assert.match(coverage("23.02", "9.0", "aarch64").detail, /no source says a linux\/arm64 image/);
});

test("RTX 5090 on driver 570 gets CUDA 12.8 images only; 12.9 and 13.x images say which driver they need", () => {
  const query = {
    computeCapability: asCapability("12.0"),
    driverVersion: asDriver("570"),
    cpuArch: "x86_64" as const,
  };
  assert.deepEqual(
    kb.ngcImagesFor(query).map((image) => image.tag),
    ["25.03", "25.02", "25.01"],
  );
  const verdicts = kb.judgeNgcImages(query);
  assert.equal(verdicts.find((v) => v.image.tag === "25.01")!.driver, "native");
  assert.match(
    verdicts.find((v) => v.image.tag === "25.10")!.reason,
    /driver 570 is older than 580, the floor of 25\.10 \(CUDA 13\.x minor-version compatibility\)/,
  );
  // 25.05 (CUDA 12.9) with a 12.0 run, a case the rows do not have: 570 is below 575.51.03.
  const rtx5090 = row("25.01").gpus.runs.find((run) => run.gpu === "NVIDIA GeForce RTX 5090")!;
  const withRun = derived("25.05", (image) => image.gpus.runs.push({ ...rtx5090 }));
  const refused = judgeNgcImage(withRun, data.cudaToolkits, query);
  assert.equal(refused.runs, false);
  assert.match(
    refused.reason,
    /older than 575\.51\.03, the floor of 25\.05 \(the GA driver of CUDA 12\.9\); CUDA 12\.x minor-version compatibility would start it from 525\.60\.13/,
  );
  assert.equal(
    judgeNgcImage(withRun, data.cudaToolkits, { ...query, driverVersion: asDriver("575.51.03") }).driver,
    "native",
  );
});

test("CUDA 13 images: 575 is refused, 580 runs 13.0 natively and 13.1 under minor-version compatibility", () => {
  const gb10 = (driverVersion: string) =>
    kb.judgeNgcImages({
      computeCapability: asCapability("12.1"),
      driverVersion: asDriver(driverVersion),
      cpuArch: "aarch64",
    });
  assert.ok(gb10("575.57.08").every((v) => !v.runs || versionParts(v.image.cuda)[0] === 12));
  assert.match(gb10("575.57.08").find((v) => v.image.tag === "25.09")!.reason, /older than 580/);
  const on580 = gb10("580.65.06");
  assert.equal(on580.find((v) => v.image.tag === "25.09")!.driver, "native");
  assert.equal(on580.find((v) => v.image.tag === "25.12")!.driver, "minor-compat");
  assert.match(on580.find((v) => v.image.tag === "25.12")!.reason, /CUDA 13\.1's own driver is 590\.44\.01/);
  // A CUDA the toolkit table lacks runs above the floor, but native is not claimed.
  const newest = on580.find((v) => v.image.tag === "26.08")!;
  if (!kb.cudaToolkit("13.4")) {
    assert.equal(newest.runs, true);
    assert.equal(newest.driver, null);
    assert.match(newest.reason, /CUDA 13\.4 is not in the toolkit table/);
  }
});

test("the GPU's own driver floor applies to NGC images too (HGX B200 needs 570.133.20)", () => {
  const verdict = kb
    .judgeNgcImages({
      computeCapability: asCapability("10.0"),
      driverVersion: asDriver("570.86.10"),
      cpuArch: "x86_64",
    })
    .find((v) => v.image.tag === "25.03")!;
  assert.equal(verdict.runs, false);
  assert.match(verdict.reason, /older than 570\.133\.20, the first driver that supports this GPU/);
  assert.equal(
    kb
      .judgeNgcImages({
        computeCapability: asCapability("10.0"),
        driverVersion: asDriver("570.133.20"),
        cpuArch: "x86_64",
      })
      .find((v) => v.image.tag === "25.03")!.runs,
    true,
  );
});

test("an installed torch is matched to its image as torch.__version__ and pip print it", () => {
  const tags = (version: string) => kb.ngcImagesForTorch(version).map((image) => image.tag);
  assert.deepEqual(tags("2.9.0a0+145a3a7bda.nv25.10"), ["25.10"]);
  // 25.05 and 25.06 share a commit: only the suffix tells them apart.
  assert.deepEqual(tags("2.8.0a0+5228986c39.nv25.06"), ["25.06"]);
  assert.deepEqual(tags("2.8.0a0+5228986c39.nv25.05"), ["25.05"]);
  assert.deepEqual(tags("2.7.0a0+ecf3bae40a.nv25.02"), ["25.02"]);
  assert.deepEqual(tags("2.10.0a0+a36e1d39eb.nv26.01.42222806"), ["26.01"]);
  // pip's metadata: numbers without leading zeros, and a build id the image's __version__ lacks.
  assert.deepEqual(tags("2.14.0a0+4fdf77b940.nv26.8.63802676"), ["26.08"]);
  assert.deepEqual(tags("2.4.0a0+3bcc3cddb5.nv24.7"), ["24.07"]);
  assert.deepEqual(tags("2.6.0a0+df5bbc09d1"), [], "without the suffix 24.11 and 24.12 cannot be told apart");
  assert.deepEqual(tags("2.11.0+cu130"), []);
  // The planner pins the image's torch: a project's exact pin of the printed string is satisfied.
  const torch = row("25.10").torch;
  assert.equal(satisfies(torch, "==2.9.0a0+145a3a7bda.nv25.10"), true);
  assert.equal(satisfies(torch, "==2.9.0a0"), true);
  assert.equal(satisfies(torch, "==2.9.0a0+145a3a7bda"), false);
});

test("integrity: a suffix naming another release, a run without its source, an assumed aarch64, a warning without an exception", () => {
  const ran: NgcGpuRun = row("25.09").gpus.runs[0]!;
  const rows = [
    derived("25.01", (image) => (image.torch = "2.6.0a0+ecf3bae40a.nv25.02")),
    derived("25.09", (image) => image.gpus.runs.push({ ...ran, source: "docs/elsewhere.md" })),
    derived("25.10", (image) =>
      image.gpus.runs.push({
        ...ran,
        gpu: "NVIDIA GeForce RTX 5090",
        computeCapability: "12.0",
        cpuArchBasis: "assumed",
      }),
    ),
    derived("25.11", (image) => (image.gpus.exceptions = [])),
    derived("25.12", (image) => (image.minDriverLinux = "575")),
    derived("25.04", (image) => (image.minDriverLinux = "570.26")),
    derived("26.02", (image) => (image.platforms.arm64 = null)),
  ];
  const problems = findContradictions({ ...data, ngcImages: rows });
  const expect = [
    /25\.01: torch 2\.6\.0a0\+ecf3bae40a\.nv25\.02 names release 25\.02/,
    /25\.09: run on NVIDIA GB10 \(12\.1\): its source docs\/elsewhere\.md is not among the row's sources/,
    /25\.10: run on NVIDIA GeForce RTX 5090 \(12\.0\): only a discrete GPU's unstated CPU may be taken as x86_64/,
    /25\.11: run on NVIDIA GeForce RTX 2060 \(7\.5\): warned, but 7\.5 is not listed as an exception/,
    /25\.12: driver floor 575 is not CUDA 13\.\d's minor-compat floor 580/,
    /25\.04: driver floor 570\.26 is not CUDA 12\.9's GA driver 575\.51\.03/,
    /26\.02: run on NVIDIA GB10 \(12\.1\): it ran on aarch64, but the row does not say that image is published/,
  ];
  for (const pattern of expect)
    assert.ok(
      problems.some((p) => pattern.test(p)),
      `${pattern}\n${problems.join("\n")}`,
    );
  // A later tag with an older torch series.
  const older = derived("25.12", (image) => (image.torch = "2.8.0a0+b4e4ee81d3.nv25.12"));
  assert.ok(
    findContradictions({ ...data, ngcImages: [row("25.11"), older] }).some((p) =>
      /25\.12: torch 2\.8\.0a0\+b4e4ee81d3\.nv25\.12 is older than 25\.11's/.test(p),
    ),
  );
  assert.deepEqual(findContradictions(data), []);
});
