/**
 * The Dockerfile: the NGC base, a constraints file that pins everything the image ships, one build
 * stage per source-built extension (exactly the target's architecture, MAX_JOBS from cores and
 * memory, pip and ccache cache mounts), then the project's requirements under those constraints.
 */
import type { ContainerPlan, JitToolchain, Plan, SourceBuild } from "../plan/types.js";
import { normalizeName } from "../util/package-name.js";
import { dockerfileQuoted, shellQuote, singleLine } from "./quote.js";
import { nvccCheckDockerfile } from "./nvcc-check.js";
import {
  CONSTRAINTS_FILE,
  GPUPREP_DIR_IN_IMAGE,
  HF_HOME,
  REQUIREMENTS_FILE,
  TORCH_HOME,
  WORKDIR,
  header,
} from "./paths.js";

/** GiB of memory one compile job may take: nvcc on PyTorch extensions often needs several. */
export const GIB_PER_BUILD_JOB = 4;

/** pip options and the RUN mount an offline wheelhouse or a mirror needs. */
function pipSource(plan: Plan): { mount: string; options: string } {
  if (plan.options.wheelhouse)
    return {
      mount: ` --mount=type=bind,source=${plan.options.wheelhouse},target=/wheelhouse`,
      options: " --no-index --find-links /wheelhouse",
    };
  if (plan.options.indexUrl)
    return { mount: "", options: ` --index-url ${shellQuote(plan.options.indexUrl)}` };
  return { mount: "", options: "" };
}

/** A regex alternative for a package name in any of pip's spellings (xformers, flash_attn, flash-attn). */
function namePattern(name: string): string {
  return normalizeName(name).replace(/-/g, "[-_.]");
}

function buildStage(build: SourceBuild, plan: Plan): string {
  const source = pipSource(plan);
  // nvcc of the right CUDA, checked before minutes of compiling.
  const check = nvccCheckDockerfile(plan, build);
  const nvccCheck = check.length > 0 ? `${check.join("\n")}\n    ` : "";
  // The package's own build variables (flash-attn reads FLASH_ATTN_CUDA_ARCHS, not TORCH_CUDA_ARCH_LIST).
  const ownEnv = Object.entries(build.env)
    .map(([name, value]) => `\n    ${name}=${dockerfileQuoted(value)} \\`)
    .join("");
  return `
# ${singleLine(`${build.name}: ${build.reason}`)}.
FROM base AS build-${normalizeName(build.name)}
ARG MAX_JOBS=
ENV TORCH_CUDA_ARCH_LIST=${dockerfileQuoted(build.archList)} \\${ownEnv}
    CCACHE_DIR=/root/.cache/ccache
# MAX_JOBS: cores, but at most one job per ${GIB_PER_BUILD_JOB} GiB of available memory (nvcc runs out of memory first).
RUN --mount=type=cache,target=/root/.cache/pip --mount=type=cache,target=/root/.cache/ccache${source.mount} \\
    ${nvccCheck}jobs="$MAX_JOBS"; \\
    if [ -z "$jobs" ]; then \\
      mem_gib=$(awk '/^MemAvailable:/ { print int($2 / 1048576) }' /proc/meminfo); \\
      jobs=$((mem_gib / ${GIB_PER_BUILD_JOB})); \\
      if [ "$jobs" -gt "$(nproc)" ]; then jobs=$(nproc); fi; \\
      if [ "$jobs" -lt 1 ]; then jobs=1; fi; \\
    fi; \\
    if [ -d /usr/lib/ccache ]; then PATH="/usr/lib/ccache:$PATH"; fi; \\
    echo "building ${build.name} for TORCH_CUDA_ARCH_LIST=$TORCH_CUDA_ARCH_LIST with MAX_JOBS=$jobs"; \\
    MAX_JOBS="$jobs" python3 -m pip wheel --no-build-isolation --no-deps --no-binary ${shellQuote(build.name)}${source.options} \\
      --wheel-dir /wheels ${shellQuote(build.requirement)}
`;
}

/** Whether the image creates a user with the host user's ids: for --non-root, and for Jupyter (never root). */
export function hostUserInImage(plan: Plan): boolean {
  return plan.options.nonRoot || plan.options.jupyter;
}

/**
 * Triton's ptxas: the image's CUDA toolkit one, for a GPU the ptxas triton bundles does not know;
 * the build stops here if this ptxas does not know it either.
 */
function tritonPtxas(jit: JitToolchain): string {
  const path = jit.ptxasPath ?? "/usr/local/cuda/bin/ptxas";
  const env = jit.variables.map((name) => `${name}=${path}`).join(" \\\n    ");
  return `# triton compiles its kernels for ${jit.target} on first use with the ptxas its wheel bundles, which does
# not know ${jit.target}; the image's CUDA toolkit ptxas (CUDA ${jit.minimumCuda} or newer) does. SETUP.md says more.
ENV ${env}
RUN "$TRITON_PTXAS_PATH" --help | grep -q "'${jit.target}'" \\
 || { echo "error: $TRITON_PTXAS_PATH does not know ${jit.target}: triton needs the ptxas of CUDA ${jit.minimumCuda} or newer" >&2; exit 1; }`;
}

/** The build's last check: torch, and the image's own packages the project requires (torchvision ...). */
function torchCheck(plan: ContainerPlan): string {
  const modules = ["torch", ...plan.container.imports];
  return `import ${modules.join(", ")}; print('torch', torch.__version__, 'CUDA', torch.version.cuda)`;
}

/**
 * FROM by digest where the registry named it (init --fetch) or the knowledge base has the tag's
 * digest (with its source); else by tag, and the comment says how to pin it (a tag can be pushed
 * again; a digest cannot change).
 */
function baseImageArg(container: ContainerPlan["container"]): string {
  const { ref, image } = container;
  // What the registry itself named for this ref (init --fetch) first; a mirror serves the same bytes.
  if (container.digest)
    return `# Pinned by digest (${singleLine(container.digest.source)}).\nARG BASE_IMAGE=${ref}@${container.digest.value}`;
  // The KB's digest is the tag's own image (a mirror serves the same bytes); a Jetson's -igpu image
  // is another tag, another digest.
  if (image.digest && (container.mirrorOf ?? ref) === image.image)
    return `# Pinned by digest (${singleLine(image.digest.source)}).\nARG BASE_IMAGE=${ref}@${image.digest.value}`;
  return `# Pinned by tag: the knowledge base has no digest for it. To pin, run \`gpuprep init --fetch\`, or set\n# BASE_IMAGE to the digest \`docker buildx imagetools inspect ${ref}\` prints (scripts/run-container.sh passes it).\nARG BASE_IMAGE=${ref}`;
}

export function renderDockerfile(plan: ContainerPlan): string {
  const image = plan.container.image;
  const source = pipSource(plan);
  const rebuilt = plan.sourceBuilds.map((b) => namePattern(b.name));
  // The freeze of the base pins everything it ships, except what we rebuild on purpose.
  const freeze = rebuilt.length
    ? `python3 -m pip list --format=freeze | grep -viE '^(${rebuilt.join("|")})==' > ${GPUPREP_DIR_IN_IMAGE}/base-packages.txt`
    : `python3 -m pip list --format=freeze > ${GPUPREP_DIR_IN_IMAGE}/base-packages.txt`;
  const lines: string[] = [];
  lines.push(header(plan, "#").trimEnd());
  lines.push(`# Base: ${plan.container.ref}, ${image.tag}: torch ${image.torch}, CUDA ${image.cuda}; needs driver ${plan.requiredDriver} or newer.
${baseImageArg(plan.container)}
FROM \${BASE_IMAGE} AS base
# bash with pipefail for every RUN here and in the stages built on this one: a failing \`pip list\`
# must stop the build, not leave base-packages.txt empty and torch unprotected.
SHELL ["/bin/bash", "-o", "pipefail", "-c"]
# Every later pip install (here and inside the running container) keeps the image's own builds:
# PIP_CONSTRAINT pins what the image ships, as \`pip list\` reports it at build time.
COPY ${CONSTRAINTS_FILE} ${GPUPREP_DIR_IN_IMAGE}/constraints.txt
RUN ${freeze}
ENV PIP_CONSTRAINT="${GPUPREP_DIR_IN_IMAGE}/constraints.txt ${GPUPREP_DIR_IN_IMAGE}/base-packages.txt" \\
    PIP_DISABLE_PIP_VERSION_CHECK=1 \\
    PYTHONUNBUFFERED=1 \\
    HF_HOME=${HF_HOME} \\
    TORCH_HOME=${TORCH_HOME}`);
  if (plan.jitToolchain) lines.push(tritonPtxas(plan.jitToolchain));
  for (const build of plan.sourceBuilds) lines.push(buildStage(build, plan).trimEnd());
  lines.push(`
FROM base AS app`);
  for (const build of plan.sourceBuilds)
    lines.push(`COPY --from=build-${normalizeName(build.name)} /wheels ${GPUPREP_DIR_IN_IMAGE}/wheels/`);
  const wheels = plan.sourceBuilds.length > 0 ? ` ${GPUPREP_DIR_IN_IMAGE}/wheels/*.whl` : "";
  const hasRequirements = plan.install.length > 0 || plan.options.jupyter;
  if (hasRequirements || wheels) {
    if (hasRequirements) lines.push(`COPY ${REQUIREMENTS_FILE} ${GPUPREP_DIR_IN_IMAGE}/requirements.txt`);
    const requirements = hasRequirements ? ` -r ${GPUPREP_DIR_IN_IMAGE}/requirements.txt` : "";
    lines.push(`RUN --mount=type=cache,target=/root/.cache/pip${source.mount} \\
    python3 -m pip install${source.options}${wheels}${requirements} \\
 && python3 -c "${torchCheck(plan)}"`);
  }
  if (hostUserInImage(plan)) {
    lines.push(`# A user with the host user's ids, so files written to the mounted project stay yours${plan.options.nonRoot ? "" : " (the jupyter service runs as it)"}.
ARG USER_UID=1000
ARG USER_GID=1000
RUN if ! getent group "$USER_GID" > /dev/null; then groupadd --gid "$USER_GID" app; fi \\
 && if ! getent passwd "$USER_UID" > /dev/null; then useradd --uid "$USER_UID" --gid "$USER_GID" --create-home --shell /bin/bash app; fi \\
 && mkdir -p ${HF_HOME} ${TORCH_HOME} ${WORKDIR} \\
 && chown "$USER_UID:$USER_GID" ${HF_HOME} ${TORCH_HOME} ${WORKDIR}${plan.options.nonRoot ? `\nUSER \${USER_UID}:\${USER_GID}` : ""}`);
  }
  // No COPY of the project: it is bind-mounted here at run time, and .dockerignore keeps it out of
  // the build context (an allowlist of the files above).
  lines.push(`WORKDIR ${WORKDIR}
CMD ["bash"]
`);
  return lines.join("\n");
}
