/**
 * An oracle for `gpuprep init`'s decisions, independent of the planner: it reads the knowledge
 * base's raw rows (decision-oracle-cuda.ts), judges code and drivers by CUDA's documented rules
 * written out there, and asks Python's `packaging` every PEP 440 question
 * (decision-oracle-packaging.ts). It imports nothing from src/. Its rules, one line each, are
 * ORACLE_RULES below; they restate issue 22 items 2, 3 and 5, docs/DESIGN.md "How init decides"
 * and docs/knowledge-base.md "NGC images".
 */
import {
  archListCovers,
  compareDotted,
  cudaCompilesFor,
  driverAtLeast,
  driverRunsCuda,
  majorMinor,
  numbers,
  type Capability,
  type CpuArch,
  type GpuRow,
  type NgcRow,
  type SystemRow,
  type Tables,
  type TorchBuildRow,
} from "./decision-oracle-cuda.js";
import type { PackagingOracle } from "./decision-oracle-packaging.js";
import type { ProjectCase } from "./decision-oracle-projects.js";

export const ORACLE_RULES = [
  "target: a GPU row by name (or a system alias: dgx-spark, jetson-thor); CPU = the row's host CPU, else x86_64; a given driver, else the named system's own driver, else unknown",
  "GPU driver: below the GPU's floor (the highest of its row's, its variants' and its architecture's minDriverLinux) or past its architecture's last branch, nothing runs; Jetsons have none (JetPack brings it)",
  "native build: a CUDA wheel of the target's platform whose arch list has a cubin for the GPU (cubin X.y runs on X.z, z >= y; Tegra: own capability only) and whose CUDA the driver runs natively or under minor-version compatibility (unknown driver: any)",
  "native order: newer torch series, PyPI's default, a driver that runs the CUDA natively, newer CUDA; with the driver unknown: newer torch series, then OLDER CUDA, then PyPI's default (the plan needs the oldest driver it can, issue 22 item 5)",
  "a driver past the GPU's last branch (Volta: R580) is refused before anything is weighed",
  "series accepts a specifier when one of its releases X.Y.0 .. X.Y.9 does (packaging, prereleases=True)",
  "image: its platform image (amd64 / arm64; a Jetson also -igpu) is published; no exception for the capability; arm64 on a Jetson only from CUDA 13 and only on 11.0; code from the platform's arch list (cubin, or PTX the driver can JIT), else a first-hand run that ran on this capability and CPU, else NVIDIA's stated floor with a cubin its CUDA compiles; its CUDA compiles for the GPU (except a run or JetPack statement); -igpu: its JetPack runs this capability",
  "image driver: unknown -> not judged; else the GPU's driver check, then the image's floor (row, else its CUDA's GA driver); native at or above the CUDA's GA driver, else minor-compat, where PTX-only code does not run",
  "torch pin policy: kept when a native series accepts it or a running image's torch satisfies it (packaging, prereleases=True), or when every series it accepts is newer than any the KB knows a build of (nothing to judge); else changed to ==S.* for the runnable native series S nearest the series the pin accepts (minor releases apart, majors 100; newer on a tie), image series only where no wheel runs; one pin reported in either plan",
  "native plan: builds the (possibly changed) pin accepts; none while builds run -> all of them, the pin reported; a variant (a +cu local pin unless changed, else the one route of torch) narrows them when one runs, else reported",
  "Python pins: a pin that excludes every Python of the first build moves to its nearest Python (newer on a tie), one pin reported each",
  "Python: per build in order, its plain Pythons that every Python pin and every requirement with wheel-pythons rows (releases the specifier accepts) allow; the newest, or the second newest where some requirement (torch family aside) has no such rows; a build with none is skipped",
  "container: running images whose torch satisfies the pin; --strategy container with an ==/===/~= pin none satisfies takes the images of its series or the nearest newer series and reports the pin moved; prefer images whose known packages (numpy, bundled) keep the other pins, then one the driver runs natively (-igpu: JetPack's), then the newest",
  "container pins reported: the changed or moved torch pin, each other pin its known package version fails, each pinned torchvision/torchaudio (version unknown), each conda python pin the image's Python fails, each torch-family route to a PyTorch index",
  "auto: the plan that keeps every pin wins (the pin change and unknown-version packages not weighed); else a container whose torch is at most 2 minor releases behind native (or when native fails); else native; neither -> error",
];

/** The fields the table compares. */
export type Answer =
  | { kind: "native"; variant: string; series: string; python: string; pins: number }
  | { kind: "container"; ref: string; series: string; python: string | null; pins: number }
  | { kind: "error"; failure: Failure };

/** The oracle's answer with its reasons. */
export type Expectation = Answer & { why: string[] };

export type Failure = "no-image" | "pin-excludes" | "no-native" | "nothing" | "unsupported-driver";

export interface OracleRow {
  target: string;
  driver: string | null;
  project: ProjectCase;
  strategy: "auto" | "container" | "native";
}

export interface OracleTarget {
  input: string;
  gpu: GpuRow;
  system: SystemRow | null;
  cpu: CpuArch;
  capability: Capability;
  key: string;
  /** The GPU's driver floor, null for a Jetson or where none is known. */
  floor: string | null;
  lastBranch: number | null;
}

interface NativeCandidate {
  build: TorchBuildRow;
  native: boolean;
}

interface RunningImage {
  row: NgcRow;
  ref: string;
  native: boolean;
}

interface Policy {
  spec: string;
  changed: string | null;
}

interface Plan<T> {
  choice: T | null;
  pins: number;
  /** Pins this plan drops that the other might keep: what auto weighs. */
  drops: number;
  why: string[];
  failure?: Failure;
}

const TORCH_FAMILY = new Set(["torch", "torchvision", "torchaudio", "triton", "pytorch-triton"]);
const PATCHES = Array.from({ length: 10 }, (_, i) => i);
/** The release series a pin is measured against when it is changed: 1.0 .. 2.20. */
const SERIES_UNIVERSE = [1, 2].flatMap((major) =>
  Array.from({ length: 21 }, (_, minor) => `${major}.${minor}`),
);

function seriesDistance(a: string, b: string): number {
  const [am = 0, an = 0] = numbers(a);
  const [bm = 0, bn = 0] = numbers(b);
  return Math.abs(am * 100 + an - (bm * 100 + bn));
}

export class DecisionOracle {
  constructor(
    private readonly kb: Tables,
    private readonly pk: PackagingOracle,
  ) {}

  /** Register every packaging question the projects can lead to. */
  register(projects: ProjectCase[]): void {
    const torchVersions = new Set<string>(this.kb.ngcImages.map((row) => row.torch));
    const series = new Set([...SERIES_UNIVERSE, ...this.kb.torchBuilds.map((b) => b.torch)]);
    for (const s of series) for (const p of PATCHES) torchVersions.add(`${s}.${p}`);
    const torchSpecs = new Set(projects.map((p) => p.torch?.spec ?? "").filter((s) => s !== ""));
    for (const s of series) torchSpecs.add(`==${s}.*`);
    this.pk.ask(torchSpecs, torchVersions);
    const pythons = new Set(
      this.kb.torchBuilds.flatMap((b) => b.pythons).filter((p) => /^\d+\.\d+$/.test(p)),
    );
    const pythonVersions = [...[...pythons].map((p) => `${p}.0`), ...this.imagePythons()];
    const pythonSpecs = new Set(projects.flatMap((p) => p.pythonLimits));
    for (const p of pythons) pythonSpecs.add(`==${p}.*`);
    this.pk.ask(pythonSpecs, pythonVersions);
    for (const project of projects)
      for (const other of project.others) this.pk.ask([other.spec], this.packageVersions(other.name));
  }

  private imagePythons(): string[] {
    return this.kb.ngcImages.map((row) => row.python).filter((p): p is string => p !== null);
  }

  private packageVersions(name: string): string[] {
    const released = this.kb.wheelPythons
      .filter((row) => row.package === name)
      .flatMap((row) => row.releases);
    const shipped = this.kb.ngcImages.flatMap((row) => [
      ...(name === "numpy" && row.numpy ? [row.numpy] : []),
      ...Object.entries(row.packages)
        .filter(([pkg]) => normalized(pkg) === name)
        .map(([, version]) => version),
    ]);
    return [...released, ...shipped];
  }

  target(input: string): OracleTarget {
    const system = this.kb.systems.find((s) => s.name === input || s.aliases.includes(input)) ?? null;
    const gpu = this.kb.gpus.find((row) => row.name === (system?.gpu ?? input));
    if (!gpu) throw new Error(`the oracle knows no GPU "${input}"`);
    const arch = this.kb.archs.find((row) => row.computeCapability === gpu.computeCapability);
    const [major = 0, minor = 0] = numbers(gpu.computeCapability);
    const tegra = arch?.tegra ?? false;
    const own = [gpu, ...(gpu.variants ?? []).map((name) => this.kb.gpus.find((row) => row.name === name))]
      .map((row) => row?.minDriverLinux)
      .filter((floor): floor is string => typeof floor === "string");
    const floors = [...own, ...(arch?.driverFloor ? [arch.driverFloor.minDriverLinux] : [])];
    floors.sort(compareDotted);
    return {
      input,
      gpu,
      system,
      cpu: gpu.hostCpuArch ?? "x86_64",
      capability: { major, minor, tegra },
      key: gpu.computeCapability,
      floor: tegra ? null : (floors[floors.length - 1] ?? null),
      lastBranch: arch?.driverFloor?.lastDriverBranch ? Number(arch.driverFloor.lastDriverBranch) : null,
    };
  }

  /** Does a driver support the GPU at all: at or above its floor, not past its last branch. */
  private gpuTakes(target: OracleTarget, driver: string): boolean {
    if (target.floor && !driverAtLeast(driver, target.floor)) return false;
    return target.lastBranch === null || (numbers(driver)[0] ?? 0) <= target.lastBranch;
  }

  private readonly accepts = new Map<string, boolean>();
  private readonly machines = new Map<string, { native: NativeCandidate[]; images: RunningImage[] }>();

  private seriesAccepts(series: string, spec: string): boolean {
    if (spec === "") return true;
    const key = `${series} ${spec}`;
    let answer = this.accepts.get(key);
    if (answer === undefined) {
      answer = PATCHES.some((p) => this.pk.contains(spec, `${series}.${p}`) === true);
      this.accepts.set(key, answer);
    }
    return answer;
  }

  /** What runs on a target with a driver: native builds and images, judged once per pair. */
  private machine(target: OracleTarget, driver: string | null) {
    const key = `${target.input}|${driver}`;
    let found = this.machines.get(key);
    if (!found) {
      found = { native: this.nativeCandidates(target, driver), images: this.runningImages(target, driver) };
      this.machines.set(key, found);
    }
    return found;
  }

  nativeCandidates(target: OracleTarget, driver: string | null): NativeCandidate[] {
    const platform = target.cpu === "aarch64" ? "linux-aarch64" : "linux-x86_64";
    if (driver !== null && !this.gpuTakes(target, driver)) return [];
    const candidates: NativeCandidate[] = [];
    for (const build of this.kb.torchBuilds) {
      if (build.platform !== platform || !build.cuda || build.archList.length === 0) continue;
      if (archListCovers(build.archList, target.capability) !== "sass") continue;
      const toolkit = this.kb.toolkits.find((row) => row.version === build.cuda);
      if (!toolkit) continue;
      const runs = driver === null ? "native" : driverRunsCuda(driver, toolkit);
      if (runs !== "no") candidates.push({ build, native: runs === "native" });
    }
    if (driver === null)
      return candidates.sort(
        (a, b) =>
          compareDotted(b.build.torch, a.build.torch) ||
          compareDotted(a.build.cuda ?? "0", b.build.cuda ?? "0") ||
          Number(b.build.pypiDefault) - Number(a.build.pypiDefault),
      );
    return candidates.sort(
      (a, b) =>
        compareDotted(b.build.torch, a.build.torch) ||
        Number(b.build.pypiDefault) - Number(a.build.pypiDefault) ||
        Number(b.native) - Number(a.native) ||
        compareDotted(b.build.cuda ?? "0", a.build.cuda ?? "0"),
    );
  }

  /** The code verdict of a plain (amd64 / arm64) image: sass, ptx, run (a first-hand run), or null. */
  private plainImageCode(row: NgcRow, target: OracleTarget): "sass" | "ptx" | "run" | null {
    const platform = target.cpu === "aarch64" ? "arm64" : "amd64";
    if (row.platforms[platform] !== true) return null;
    if (row.gpus.exceptions.some((e) => e.computeCapability === target.key)) return null;
    if (
      platform === "arm64" &&
      target.capability.tegra &&
      ((numbers(row.cuda)[0] ?? 0) < 13 || target.key !== "11.0")
    )
      return null;
    const list = row.archLists.find((l) => l.platform === platform);
    if (list) {
      const covers = archListCovers(list.archList, target.capability);
      return covers === "none" ? null : covers;
    }
    const ran = row.gpus.runs.some(
      (run) => run.computeCapability === target.key && run.result === "ran" && run.cpuArch === target.cpu,
    );
    if (ran) return "run";
    if (target.capability.tegra || !row.gpus.minComputeCapability) return null;
    if (compareDotted(target.key, row.gpus.minComputeCapability) < 0) return null;
    return cudaCompilesFor(this.kb.toolkits, row.cuda, target.capability) ? "sass" : null;
  }

  /** Does the plain image run with this driver, and natively: null when it does not run. */
  private plainImageDriver(row: NgcRow, target: OracleTarget, driver: string | null, ptxOnly: boolean) {
    if (driver === null) return { native: false };
    if (!this.gpuTakes(target, driver)) return null;
    const toolkit = this.kb.toolkits.find((t) => t.version === majorMinor(row.cuda));
    const floor = row.minDriverLinux ?? toolkit?.minDriverLinux ?? null;
    if (floor && !driverAtLeast(driver, floor)) return null;
    if (!toolkit) return { native: false };
    const native = driverRunsCuda(driver, toolkit) === "native";
    if (ptxOnly && !native) return null;
    return { native };
  }

  /** The images that run on the target with this driver, newest tag first (a tag's -igpu image after its plain one). */
  runningImages(target: OracleTarget, driver: string | null): RunningImage[] {
    const rows = [...this.kb.ngcImages].sort((a, b) => compareDotted(b.tag, a.tag));
    const running: RunningImage[] = [];
    for (const row of rows) {
      const code = this.plainImageCode(row, target);
      const knows =
        code === "run" || (code !== null && cudaCompilesFor(this.kb.toolkits, row.cuda, target.capability));
      const driven = code && knows ? this.plainImageDriver(row, target, driver, code === "ptx") : null;
      if (driven) running.push({ row, ref: row.tag, native: driven.native });
      const jetpack = target.cpu === "aarch64" && target.capability.tegra && row.platforms.igpu === true;
      if (jetpack && row.jetson?.computeCapabilities.includes(target.key))
        running.push({ row, ref: `${row.tag}-igpu`, native: true });
    }
    return running;
  }

  /** Issue 22 item 2: keep the pin where something runs that satisfies it, else change it once. */
  private policy(project: ProjectCase, native: NativeCandidate[], images: RunningImage[]): Policy {
    const spec = project.torch?.spec ?? "";
    if (spec === "") return { spec, changed: null };
    const kept =
      native.some((c) => this.seriesAccepts(c.build.torch, spec)) ||
      images.some((i) => this.pk.contains(spec, i.row.torch) === true);
    if (kept) return { spec, changed: null };
    const pool =
      native.length > 0 ? native.map((c) => c.build.torch) : images.map((i) => majorMinor(i.row.torch));
    const accepted = SERIES_UNIVERSE.filter((s) => this.seriesAccepts(s, spec));
    const newestKnown =
      this.kb.torchBuilds
        .map((b) => b.torch)
        .sort(compareDotted)
        .pop() ?? "0.0";
    if (accepted.length > 0 && accepted.every((s) => compareDotted(s, newestKnown) > 0))
      return { spec, changed: null };
    const anchors = accepted.length > 0 ? accepted : [highestNamed(spec)];
    const distance = (s: string) => Math.min(...anchors.map((a) => seriesDistance(s, a)));
    const sorted = [...new Set(pool)].sort((a, b) => distance(a) - distance(b) || compareDotted(b, a));
    const series = sorted[0];
    return series ? { spec: `==${series}.*`, changed: series } : { spec, changed: null };
  }

  private knownWheels(name: string, spec: string, platform: string) {
    const rows = this.kb.wheelPythons.filter(
      (row) =>
        row.package === name &&
        row.platforms.includes(platform) &&
        row.releases.some((release) => this.pk.contains(spec, release) === true),
    );
    if (rows.length === 0) return null;
    const pythons = new Set(rows.flatMap((row) => row.pythons));
    const from = rows
      .map((row) => row.anyPythonFrom)
      .filter((p): p is string => !!p)
      .sort(compareDotted)[0];
    return (python: string) =>
      pythons.has(python) || (from !== undefined && compareDotted(python, from) >= 0);
  }

  private pythonFits(python: string, limits: string[]): boolean {
    return limits.every((limit) => this.pk.contains(limit, `${python}.0`) !== false);
  }

  /** A Python pin that excludes every Python of the build moves to its nearest one (newer on a tie). */
  private relaxPythonLimits(build: TorchBuildRow, limits: string[]): { limits: string[]; changed: number } {
    const pythons = plainPythons(build);
    if (pythons.some((p) => this.pythonFits(p, limits))) return { limits, changed: 0 };
    let changed = 0;
    const relaxed = limits.map((limit) => {
      if (pythons.some((p) => this.pythonFits(p, [limit]))) return limit;
      const anchor = /\d+\.\d+/.exec(limit)?.[0] ?? "0.0";
      const nearest = [...pythons].sort(
        (a, b) => seriesDistance(a, anchor) - seriesDistance(b, anchor) || compareDotted(b, a),
      )[0];
      changed++;
      return `==${nearest}.*`;
    });
    return { limits: relaxed, changed };
  }

  private choosePython(build: TorchBuildRow, project: ProjectCase, limits: string[]): string | null {
    const checks = project.others.map((o) => ({ o, has: this.knownWheels(o.name, o.spec, build.platform) }));
    const unsure = checks.some(({ o, has }) => has === null && !TORCH_FAMILY.has(o.name));
    const fitting = plainPythons(build)
      .reverse()
      .filter((p) => this.pythonFits(p, limits) && checks.every(({ has }) => has === null || has(p)));
    return (unsure && fitting.length > 1 ? fitting[1] : fitting[0]) ?? null;
  }

  private nativePlan(
    project: ProjectCase,
    native: NativeCandidate[],
    policy: Policy,
  ): Plan<{ build: TorchBuildRow; python: string }> {
    const why: string[] = [];
    let pins = policy.changed ? 1 : 0;
    let drops = 0;
    let pool = native.filter((c) => this.seriesAccepts(c.build.torch, policy.spec));
    if (pool.length === 0 && native.length > 0 && project.torch) {
      why.push(`no build ${policy.spec} accepts runs: pin reported`);
      pool = native;
      pins++;
      drops++;
    }
    const torchRoutes = new Set(project.routes.filter((r) => r.pkg === "torch").map((r) => r.variant));
    const variant =
      (!policy.changed ? project.torch?.variant : null) ??
      (torchRoutes.size === 1 ? [...torchRoutes][0] : null);
    if (variant) {
      const routed = pool.filter((c) => c.build.variant === variant);
      if (routed.length > 0) pool = routed;
      else {
        why.push(`no ${variant} build runs: route reported`);
        pins++;
        drops++;
      }
    }
    const first = pool[0];
    if (!first) return { choice: null, pins, drops, why: [...why, "no native build"], failure: "no-native" };
    const relaxed = this.relaxPythonLimits(first.build, project.pythonLimits);
    pins += relaxed.changed;
    drops += relaxed.changed;
    if (relaxed.changed > 0) why.push(`${relaxed.changed} Python pin(s) moved`);
    for (const candidate of pool) {
      const python = this.choosePython(candidate.build, project, relaxed.limits);
      if (python === null) continue;
      why.push(
        `torch ${candidate.build.torch} ${candidate.build.variant} (${candidate.native ? "native" : "minor-compat"} driver), Python ${python}`,
      );
      return { choice: { build: candidate.build, python }, pins, drops, why };
    }
    return { choice: null, pins, drops, why: [...why, "no Python fits"], failure: "no-native" };
  }

  private brokenPins(row: NgcRow, project: ProjectCase): number {
    return project.others.filter((o) => {
      const version = shippedVersion(row, o.name);
      return version !== null && this.pk.contains(o.spec, version) === false;
    }).length;
  }

  private containerPlan(
    project: ProjectCase,
    images: RunningImage[],
    policy: Policy,
    asked: boolean,
  ): Plan<RunningImage> {
    const spec = policy.spec;
    const excluded = images.filter((i) => spec !== "" && this.pk.contains(spec, i.row.torch) !== true);
    let candidates = images.filter((i) => !excluded.includes(i));
    let moved = false;
    const exact = /^(?:==|===|~=)\s*(\d+\.\d+)[^,]*$/.exec(spec);
    if (candidates.length === 0 && asked && exact?.[1]) {
      const wanted = exact[1];
      const newer = [...new Set(excluded.map((i) => majorMinor(i.row.torch)))]
        .filter((s) => compareDotted(s, wanted) >= 0)
        .sort(compareDotted)[0];
      candidates = excluded.filter((i) => majorMinor(i.row.torch) === newer);
      moved = candidates.length > 0;
    }
    if (candidates.length === 0) {
      const failure = excluded.length > 0 && project.torch ? "pin-excludes" : "no-image";
      return { choice: null, pins: 0, drops: 0, why: [`container: ${failure}`], failure };
    }
    const keeping = candidates.filter((i) => this.brokenPins(i.row, project) === 0);
    const preferred = keeping.length > 0 ? keeping : candidates;
    const chosen = preferred.find((i) => i.native) ?? preferred[0]!;
    const unknown = project.others.filter(
      (o) =>
        (o.name === "torchvision" || o.name === "torchaudio") &&
        o.spec !== "" &&
        shippedVersion(chosen.row, o.name) === null,
    ).length;
    const pythonPins = project.condaPythonPins.filter(
      (pin) => chosen.row.python !== null && this.pk.contains(pin, chosen.row.python) === false,
    ).length;
    const torchPin = policy.changed || moved ? 1 : 0;
    const pins =
      torchPin + this.brokenPins(chosen.row, project) + unknown + pythonPins + project.routes.length;
    const why = [
      `image ${chosen.ref} (torch ${chosen.row.torch}, ${chosen.native ? "native" : "not native"} driver)${moved ? ", pin moved" : ""}`,
    ];
    return { choice: chosen, pins, drops: pins - (policy.changed ? 1 : 0) - unknown, why };
  }

  expect(row: OracleRow): Expectation {
    const target = this.target(row.target);
    const driver = row.driver ?? target.system?.driver ?? null;
    if (driver !== null && target.lastBranch !== null && (numbers(driver)[0] ?? 0) > target.lastBranch)
      return {
        kind: "error",
        failure: "unsupported-driver",
        why: [`driver ${driver} is past R${target.lastBranch}`],
      };
    const { native, images } = this.machine(target, driver);
    const policy = this.policy(row.project, native, images);
    const why = policy.changed ? [`pin changed to ${policy.spec}`] : [];
    const nat = this.nativePlan(row.project, native, policy);
    const con = this.containerPlan(row.project, images, policy, row.strategy === "container");
    const pick = decide(row.strategy, nat, con);
    if (pick === "native" && nat.choice)
      return {
        kind: "native",
        variant: nat.choice.build.variant,
        series: nat.choice.build.torch,
        python: nat.choice.python,
        pins: nat.pins,
        why: [...why, ...nat.why],
      };
    if (pick === "container" && con.choice)
      return {
        kind: "container",
        ref: con.choice.ref,
        series: majorMinor(con.choice.row.torch),
        python: con.choice.row.python ? majorMinor(con.choice.row.python) : null,
        pins: con.pins,
        why: [...why, ...con.why],
      };
    const failure =
      row.strategy === "container" ? con.failure : row.strategy === "native" ? nat.failure : "nothing";
    return { kind: "error", failure: failure ?? "nothing", why: [...why, ...nat.why, ...con.why] };
  }
}

function decide(
  strategy: OracleRow["strategy"],
  nat: Plan<{ build: TorchBuildRow }>,
  con: Plan<RunningImage>,
): "native" | "container" | null {
  if (strategy !== "auto")
    return strategy === "native" ? (nat.choice ? "native" : null) : con.choice ? "container" : null;
  if (nat.choice && con.choice && con.drops > 0 && nat.drops === 0) return "native";
  if (nat.choice && con.choice && nat.drops > 0 && con.drops === 0) return "container";
  if (con.choice && (!nat.choice || lag(con.choice.row.torch, nat.choice.build.torch) <= 2))
    return "container";
  return nat.choice ? "native" : null;
}

/** Minor releases an image's torch is behind the native series; a lower major is infinitely behind. */
function lag(imageTorch: string, nativeSeries: string): number {
  const [im = 0, iv = 0] = numbers(imageTorch);
  const [nm = 0, nv = 0] = numbers(nativeSeries);
  if (im !== nm) return im < nm ? Infinity : 0;
  return Math.max(0, nv - iv);
}

function plainPythons(build: TorchBuildRow): string[] {
  return build.pythons.filter((p) => /^\d+\.\d+$/.test(p)).sort(compareDotted);
}

/** The highest release a specifier names, as a series ("<2.8" -> 2.8). */
function highestNamed(spec: string): string {
  const named = [...spec.matchAll(/\d+(?:\.\d+)+/g)].map((m) => majorMinor(m[0]));
  return named.sort(compareDotted).pop() ?? "0.0";
}

function normalized(name: string): string {
  return name.toLowerCase().replace(/[-_.]+/g, "-");
}

/** The version of a package an image ships, where the knowledge base knows it. */
function shippedVersion(row: NgcRow, name: string): string | null {
  if (name === "numpy" && row.numpy) return row.numpy;
  const entry = Object.entries(row.packages).find(([pkg]) => normalized(pkg) === name);
  return entry ? entry[1] : null;
}
