/**
 * The projects of the generated decision table, one per pin form: each is the files written to a
 * temporary directory (read by the real project reader) AND what those files pin, written down by
 * the same generator for the oracle, which never reads them through src/. Conda version specs are
 * turned into PEP 440 here by conda's own rules
 * (https://docs.conda.io/projects/conda/en/stable/user-guide/concepts/pkg-specs.html): `=2.5` is
 * fuzzy (2.5.*), `==2.5.1` and a bare `2.5.1` are exact; pixi writes the bare form.
 */

export type PinForm =
  | "torch not named"
  | "torch unpinned"
  | ">="
  | "<"
  | "=="
  | "==X.Y.*"
  | "range"
  | "+cu local"
  | "uv route"
  | "requirements --index-url"
  | "pixi"
  | "conda environment.yml";

export interface ProjectCase {
  id: string;
  form: PinForm;
  files: Record<string, string>;
  /** The torch requirement: its public PEP 440 specifier and the variant a local version names. */
  torch: { spec: string; variant: string | null } | null;
  /** Routes of torch-family packages to a PyTorch index variant, one per package routed. */
  routes: Array<{ pkg: string; variant: string }>;
  /** PEP 440 bounds on the venv's Python: requires-python and the conda `python` pins. */
  pythonLimits: string[];
  /** The conda `python` pins among them: a container whose Python they exclude reports each. */
  condaPythonPins: string[];
  /** Every other requirement, by normalized name. */
  others: Array<{ name: string; spec: string }>;
}

/** conda's spec in PEP 440: "2.5.1" (pixi, bare) -> ==2.5.1, "=2.5" -> ==2.5.*, "2.7.*" -> ==2.7.* */
export function condaSpecToPep440(spec: string): string {
  return spec
    .split(",")
    .map((clause) => {
      const text = clause.trim();
      if (text === "" || text === "*") return "";
      if (/^=[^=]/.test(text)) return `==${text.slice(1)}${text.endsWith(".*") ? "" : ".*"}`;
      if (/^[<>=!~]/.test(text)) return text;
      return `==${text}`;
    })
    .filter((clause) => clause !== "")
    .join(",");
}

function base(id: string, form: PinForm, files: Record<string, string>): ProjectCase {
  return { id, form, files, torch: null, routes: [], pythonLimits: [], condaPythonPins: [], others: [] };
}

/** requirements.txt with a torch line (or none) and other lines. */
function requirements(
  id: string,
  form: PinForm,
  torchSpec: string | null,
  others: Array<{ name: string; spec: string }> = [],
  indexVariant: string | null = null,
): ProjectCase {
  const lines = [
    ...(indexVariant ? [`--index-url https://download.pytorch.org/whl/${indexVariant}`] : []),
    ...(torchSpec === null ? [] : [`torch${torchSpec}`]),
    ...others.map((o) => `${o.name}${o.spec}`),
  ];
  const local = torchSpec ? /^==([0-9.]+)\+(cu\d+)$/.exec(torchSpec) : null;
  return {
    ...base(id, form, { "requirements.txt": `${lines.join("\n")}\n` }),
    torch:
      torchSpec === null
        ? null
        : local
          ? { spec: `==${local[1]}`, variant: local[2] ?? null }
          : { spec: torchSpec, variant: null },
    routes: indexVariant && torchSpec !== null ? [{ pkg: "torch", variant: indexVariant }] : [],
    others,
  };
}

/** pyproject.toml with torch and torchvision routed to a PyTorch index variant by [tool.uv.sources]. */
function uvRouted(variant: string, torchSpec = "", requiresPython = ">=3.9"): ProjectCase {
  const files = {
    "pyproject.toml":
      `[project]\nname = "routed"\nversion = "0"\nrequires-python = "${requiresPython}"\n` +
      `dependencies = ["torch${torchSpec}", "torchvision"]\n\n[tool.uv.sources]\n` +
      `torch = [{ index = "pytorch" }]\ntorchvision = [{ index = "pytorch" }]\n\n` +
      `[[tool.uv.index]]\nname = "pytorch"\nurl = "https://download.pytorch.org/whl/${variant}"\nexplicit = true\n`,
  };
  return {
    ...base(`uv sources -> ${variant}${torchSpec ? ` torch${torchSpec}` : ""}`, "uv route", files),
    torch: { spec: torchSpec, variant: null },
    routes: [
      { pkg: "torch", variant },
      { pkg: "torchvision", variant },
    ],
    pythonLimits: [requiresPython],
    others: [{ name: "torchvision", spec: "" }],
  };
}

/** pyproject.toml without routes: requires-python and dependencies. */
function pyproject(id: string, requiresPython: string, deps: Array<{ name: string; spec: string }>) {
  const list = deps.map((d) => `"${d.name}${d.spec}"`).join(", ");
  const files = {
    "pyproject.toml": `[project]\nname = "plain"\nversion = "0"\nrequires-python = "${requiresPython}"\ndependencies = [${list}]\n`,
  };
  const torch = deps.find((d) => d.name === "torch");
  return {
    ...base(id, torch?.spec ? ">=" : "torch unpinned", files),
    torch: torch ? { spec: torch.spec, variant: null } : null,
    pythonLimits: [requiresPython],
    others: deps.filter((d) => d.name !== "torch"),
  } satisfies ProjectCase;
}

/** A pixi.toml on conda-forge: pytorch and python as conda specs, other conda and PyPI dependencies. */
function pixi(pytorch: string, python: string | null): ProjectCase {
  const others = [
    { name: "transformers", conda: ">=4.45,<5" },
    { name: "pandas", conda: ">=2.2,<3" },
  ];
  const files = {
    "pixi.toml":
      `[workspace]\nname = "pixi-case"\nchannels = ["conda-forge"]\nplatforms = ["linux-64", "linux-aarch64"]\n\n` +
      `[dependencies]\n${python ? `python = "${python}"\n` : ""}pytorch = "${pytorch}"\n` +
      others.map((o) => `${o.name} = "${o.conda}"\n`).join("") +
      `\n[pypi-dependencies]\neinops = ">=0.8"\n`,
  };
  const pythonPin = python ? condaSpecToPep440(python) : null;
  return {
    ...base(`pixi pytorch = "${pytorch}"${python ? `, python = "${python}"` : ""}`, "pixi", files),
    torch: { spec: condaSpecToPep440(pytorch), variant: null },
    pythonLimits: pythonPin ? [pythonPin] : [],
    condaPythonPins: pythonPin ? [pythonPin] : [],
    others: [
      ...others.map((o) => ({ name: o.name, spec: condaSpecToPep440(o.conda) })),
      { name: "einops", spec: ">=0.8" },
    ],
  };
}

/** An environment.yml on the pytorch channel: pytorch, optionally pytorch-cuda, python, numpy. */
function condaEnv(pytorch: string, cuda: string | null, python: string, numpy: string | null): ProjectCase {
  const lines = [
    `python${python}`,
    `pytorch::pytorch${pytorch}`,
    ...(cuda ? [`pytorch::pytorch-cuda=${cuda}`] : []),
    ...(numpy ? [`numpy${numpy}`] : []),
    "tqdm",
  ];
  const files = {
    "environment.yml": `name: case\nchannels:\n  - pytorch\n  - nvidia\n  - conda-forge\ndependencies:\n${lines.map((l) => `  - ${l}`).join("\n")}\n`,
  };
  const pythonPin = condaSpecToPep440(python);
  return {
    ...base(
      `environment.yml pytorch${pytorch || " (any)"}${cuda ? ` pytorch-cuda=${cuda}` : ""} python${python}`,
      "conda environment.yml",
      files,
    ),
    torch: { spec: condaSpecToPep440(pytorch), variant: null },
    routes: cuda ? [{ pkg: "torch", variant: `cu${cuda.replace(".", "")}` }] : [],
    pythonLimits: [pythonPin],
    condaPythonPins: [pythonPin],
    others: [
      ...(numpy ? [{ name: "numpy", spec: condaSpecToPep440(numpy) }] : []),
      { name: "tqdm", spec: "" },
    ],
  };
}

const NUMPY_LT2 = { name: "numpy", spec: "<2" };

/** Every NGC torch series (23.02's 1.14, 24.01's 2.2 … 26.09's 2.14): ==X.Y.* picks each tag's series. */
const NGC_SERIES = "1.14 2.2 2.3 2.4 2.5 2.6 2.7 2.8 2.9 2.10 2.11 2.12 2.13 2.14".split(" ");
const RANGES = [">=2.6,<2.9", ">=2.7,<2.8", ">=2.3,<2.6", "~=2.9.0", ">2.5,<=2.10", ">=2.0,!=2.7.*,<2.9"];
const LOCAL_PINS = [
  "2.7.1+cu118",
  "2.7.1+cu128",
  "2.8.0+cu126",
  "2.9.1+cu130",
  "2.5.1+cu121",
  "2.11.0+cu129",
];

/** requirements.txt projects: torch unnamed, unpinned, >=, <, ==, ==X.Y.*, ranges, +cu local versions. */
function requirementsCases(): ProjectCase[] {
  const cases: ProjectCase[] = [
    requirements("torch not named (transformers, accelerate)", "torch not named", null, [
      { name: "transformers", spec: "" },
      { name: "accelerate", spec: "" },
    ]),
    requirements("torch", "torch unpinned", ""),
    requirements("torch, numpy<2", "torch unpinned", "", [NUMPY_LT2]),
  ];
  for (const v of ["2.0", "2.4", "2.7", "2.9", "2.11", "2.13", "2.14", "2.15"])
    cases.push(requirements(`torch>=${v}`, ">=", `>=${v}`));
  for (const v of ["1.13", "2.4", "2.6", "2.8", "2.10", "2.12"])
    cases.push(requirements(`torch<${v}`, "<", `<${v}`));
  for (const v of ["1.13.1", "2.2.2", "2.5.1", "2.7.1", "2.10.0", "2.12.0"])
    cases.push(requirements(`torch==${v}`, "==", `==${v}`));
  cases.push(requirements("torch==2.8.0, numpy<2", "==", "==2.8.0", [NUMPY_LT2]));
  for (const v of NGC_SERIES) cases.push(requirements(`torch==${v}.*`, "==X.Y.*", `==${v}.*`));
  for (const spec of RANGES) cases.push(requirements(`torch${spec}`, "range", spec));
  for (const pin of LOCAL_PINS) cases.push(requirements(`torch==${pin}`, "+cu local", `==${pin}`));
  cases.push(
    requirements("torch>=2.6, torchvision==0.21.0", ">=", ">=2.6", [
      { name: "torchvision", spec: "==0.21.0" },
    ]),
  );
  return cases;
}

/** Projects whose torch goes to a variant (uv sources, --index-url) or that pixi / conda manage. */
function routedAndManagedCases(): ProjectCase[] {
  const cases: ProjectCase[] = ["cu118", "cu126", "cu128", "cu130", "cu132"].map((v) => uvRouted(v));
  cases.push(uvRouted("cu128", ">=2.9", ">=3.10"));
  for (const variant of ["cu118", "cu126", "cu128"])
    cases.push(requirements(`--index-url ${variant}, torch`, "requirements --index-url", "", [], variant));
  cases.push(requirements("--index-url cu130, torch>=2.9", "requirements --index-url", ">=2.9", [], "cu130"));
  cases.push(pixi("2.5.1", "3.11.*"), pixi("2.7.*", "3.12.*"), pixi(">=2.6,<2.9", ">=3.10"));
  cases.push(pixi("2.9.*", "3.9.*"), pixi("*", "3.13.*"));
  cases.push(condaEnv("", "12.1", ">=3.9", "<2"), condaEnv("=2.5.1", "11.8", "=3.10", null));
  cases.push(condaEnv("=2.4", "12.4", ">=3.9", null), condaEnv(">=2.6", null, "=3.11", "<2"));
  cases.push(
    pyproject('requires-python ">=3.10,<3.13", torch>=2.6, numpy', ">=3.10,<3.13", [
      { name: "torch", spec: ">=2.6" },
      { name: "numpy", spec: "" },
    ]),
  );
  return cases;
}

/** Every project of the generated table. */
export function projectCases(): ProjectCase[] {
  return [...requirementsCases(), ...routedAndManagedCases()];
}
