/**
 * The command that reinstalls one package, right for the installer this environment uses and for
 * where the package's wheels come from (docs/failures.md, "Fix commands that are wrong"):
 * - `uv venv` environments have no pip: `uv pip install --python <python>` with `--reinstall-package`;
 * - a conda environment takes the pip command with its own python; a conda-installed package is
 *   removed first, since conda builds are not made for one GPU;
 * - `--force-reinstall` alone also reinstalls torch from the default index (Samsung/TICO#69,
 *   xformers#1146): extension fixes add `--no-deps`;
 * - reinstalling a wheel that lacks this GPU's arch fetches the same wheel again: `--no-binary <pkg>`
 *   builds it from source, for this GPU only (TORCH_CUDA_ARCH_LIST, or flash-attn's own settings).
 */
import type { Facts } from "../facts/schema.js";
import type { ComputeCapability } from "../kb/compat.js";
import { normalizeName } from "../util/package-name.js";
import { pythonCmd } from "./view.js";

type Installer = "pip" | "uv" | "conda" | "pixi";

/**
 * A pixi workspace's environment (.pixi/envs/NAME): a pip install there is undone by the next
 * `pixi install`, so its fixes are pixi.toml lines and pixi commands (issue 22 item 8).
 */
function isPixiEnvironment(facts: Facts): boolean {
  return /\/\.pixi\/envs\/[^/]+\/?$/.test(facts.python.interpreter.prefix);
}

/** How packages get into this environment: the interpreter's kind, then the package's INSTALLER. */
export function installerFor(facts: Facts, distribution: string | null): Installer {
  if (isPixiEnvironment(facts)) return "pixi";
  const kind = facts.python.interpreter.kind;
  const installedBy = distribution
    ? facts.python.distributions.find((d) => d.normalizedName === normalizeName(distribution))?.installer
    : undefined;
  if (kind === "uv" || installedBy === "uv") return "uv";
  if (kind === "conda") return "conda";
  return "pip";
}

interface Reinstall {
  /** The distribution as pip names it (flash-attn, not flash_attn). */
  name: string;
  /** Its installed version: a source build rebuilds the same release (the local +tag dropped). */
  version: string | null;
  /**
   * Build from source (--no-binary), because the wheel lacks this GPU's arch or was built against
   * another torch. gpu: the arch to build for; "ask-torch": the capability torch reports when the
   * command runs; null: no arch setting (no GPU known, torch's own default applies).
   */
  sourceBuild: { gpu: ComputeCapability | "ask-torch" | null } | null;
  /** Keep its dependencies (torch above all) as they are: --no-deps. */
  noDeps: boolean;
}

/** The package's own arch setting: flash-attn ignores TORCH_CUDA_ARCH_LIST and downloads a wheel unless forced. */
function archEnv(name: string, gpu: ComputeCapability | "ask-torch" | null, python: string): string {
  if (gpu === null) return "";
  const asked = (format: string) =>
    `$(${python} -c 'import torch; print("${format}" % torch.cuda.get_device_capability())')`;
  if (normalizeName(name) === "flash-attn")
    return `FLASH_ATTENTION_FORCE_BUILD=TRUE FLASH_ATTN_CUDA_ARCHS="${gpu === "ask-torch" ? asked("%d%d") : `${gpu.major}${gpu.minor}`}" `;
  return `TORCH_CUDA_ARCH_LIST="${gpu === "ask-torch" ? asked("%d.%d") : `${gpu.major}.${gpu.minor}`}" `;
}

interface InstallOptions {
  /** Flags for both installers, first (--no-build-isolation, --no-deps). */
  flags?: string[];
  /** Reinstall the packages even if installed: pip --force-reinstall, uv --reinstall-package each. */
  reinstall?: boolean;
  /** Leave the download cache aside: pip --no-cache-dir, uv --no-cache. */
  noCache?: boolean;
  /** Packages to build from source, never from a wheel: --no-binary X. */
  noBinary?: string[];
  /** After the packages (--index-url URL). */
  trailing?: string[];
  /** Variables for the build, before the command (TORCH_CUDA_ARCH_LIST="9.0" MAX_JOBS=4). */
  env?: string;
}

/** The project name in a requirement: "numpy<2" -> numpy, "torch==2.11.0" -> torch. */
function nameOf(requirement: string): string {
  return requirement.replace(/^"/, "").split(/[\s<>=!~;[@"]/)[0] ?? requirement;
}

/** pixi: the packages as pixi.toml's [pypi-dependencies] lines (with their index), then `pixi install`. */
function pixiCommand(packages: string[], options: InstallOptions): string {
  const index = (options.trailing ?? []).join(" ").match(/--index-url (\S+)/)?.[1];
  if (!index) return `pixi add --pypi ${packages.join(" ")}`;
  const lines = packages.map((p) => {
    const requirement = p.replace(/^"|"$/g, "");
    const name = nameOf(requirement);
    const version = requirement.slice(name.length) || "*";
    return `${name} = { version = "${version}", index = "${index}" }`;
  });
  return `# pixi.toml, under [pypi-dependencies]: ${lines.join("; ")}; then: pixi install`;
}

/**
 * `<python> -m pip install ...`, or `uv pip install --python <python> ...` where uv manages the
 * environment, pixi's own commands in a pixi environment, and ensurepip first where the
 * environment has no pip (a venv made with --without-pip).
 */
export function installCommand(facts: Facts, packages: string[], options: InstallOptions = {}): string {
  const python = pythonCmd(facts);
  const installer = installerFor(facts, packages.length === 1 ? nameOf(packages[0]!) : null);
  if (installer === "pixi") return pixiCommand(packages, options);
  const uv = installer === "uv";
  const args = [
    ...(options.flags ?? []),
    ...(options.noCache ? [uv ? "--no-cache" : "--no-cache-dir"] : []),
    ...(options.reinstall
      ? uv
        ? packages.map((p) => `--reinstall-package ${nameOf(p)}`)
        : ["--force-reinstall"]
      : []),
    ...(options.noBinary ?? []).map((p) => `--no-binary ${p}`),
    ...packages,
    ...(options.trailing ?? []),
  ];
  const env = options.env ? `${options.env} ` : "";
  if (uv) return `${env}uv pip install --python ${python} ${args.join(" ")}`;
  const hasPip = facts.python.distributions.some((d) => d.normalizedName === "pip");
  return `${hasPip ? "" : `${python} -m ensurepip --upgrade && `}${env}${python} -m pip install ${args.join(" ")}`;
}

/** `pip check` for this environment's installer: are the installed packages' requirements met? */
export function checkCommand(facts: Facts): string {
  const python = pythonCmd(facts);
  return installerFor(facts, null) === "uv" ? `uv pip check --python ${python}` : `${python} -m pip check`;
}

/** The reinstall command(s) of one package, in order. */
export function reinstallCommands(facts: Facts, request: Reinstall): string[] {
  const { name, sourceBuild } = request;
  const requirement = sourceBuild && request.version ? `${name}==${request.version.split("+")[0]}` : name;
  const command = installCommand(facts, [requirement], {
    env: sourceBuild ? `${archEnv(name, sourceBuild.gpu, pythonCmd(facts))}MAX_JOBS=4` : "",
    flags: [...(sourceBuild ? ["--no-build-isolation"] : []), ...(request.noDeps ? ["--no-deps"] : [])],
    noCache: true,
    reinstall: true,
    noBinary: sourceBuild ? [name] : [],
  });
  const byConda =
    installerFor(facts, name) === "conda" &&
    facts.python.distributions.find((d) => d.normalizedName === normalizeName(name))?.installer === "conda";
  return byConda
    ? [
        `conda remove --force -y ${name}   # conda builds are not made for one GPU: pip builds it below`,
        command,
      ]
    : [command];
}

/** The distribution that owns an import or a binary directory: "flash_attn" -> flash-attn 2.7.4. */
export function distributionOf(
  facts: Facts,
  moduleOrDirectory: string,
): { name: string; version: string | null } {
  const ext = facts.python.extensions.find((e) => e.module === moduleOrDirectory && e.distribution);
  if (ext?.distribution) return { name: ext.distribution, version: ext.version };
  const dist = facts.python.distributions.find((d) => d.normalizedName === normalizeName(moduleOrDirectory));
  return dist ? { name: dist.name, version: dist.version } : { name: moduleOrDirectory, version: null };
}
