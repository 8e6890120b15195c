/**
 * A pixi project's native plan edits its own pixi.toml (issue 22 item 6), so it stays a pixi
 * project: the conda torch that has no code for the GPU is commented out, torch comes from the
 * PyTorch index variant that runs under [pypi-dependencies] (pixi resolves PyPI packages after the
 * conda ones), [system-requirements] cuda names the CUDA that build needs, and the pins the plan
 * had to change (python) are changed in place. Every other line stays as the user wrote it.
 */
import { parse } from "smol-toml";
import type { NativePlan } from "../plan/types.js";
import { singleLine, tomlString } from "./quote.js";

/** Conda packages that are torch or a build of torch's family: replaced by the index's wheels. */
const CONDA_TORCH = /^\s*(pytorch|pytorch-gpu|pytorch-cpu|pytorch-cuda|torchvision|torchaudio|cpuonly)\s*=/;
/** PyPI name of each conda one that is installed from the index. */
const PYPI_OF: Record<string, string> = {
  pytorch: "torch",
  "pytorch-gpu": "torch",
  torchvision: "torchvision",
  torchaudio: "torchaudio",
};

interface Table {
  name: string;
  /** Index of the header line; -1 for the top of the file. */
  header: number;
  /** Index one past its last line. */
  end: number;
}

function tables(lines: string[]): Table[] {
  const out: Table[] = [{ name: "", header: -1, end: lines.length }];
  lines.forEach((line, i) => {
    const header = /^\s*\[([^\]]+)\]\s*(#.*)?$/.exec(line);
    if (!header) return;
    out[out.length - 1]!.end = i;
    out.push({ name: header[1]!.trim(), header: i, end: lines.length });
  });
  return out;
}

function lineNumber(origin: string, file: string): number | null {
  const match = new RegExp(`^${file.replace(/\./g, "\\.")}:(\\d+)$`).exec(origin);
  return match ? Number(match[1]) - 1 : null;
}

interface PixiPin {
  content: string;
  notes: string[];
}

export function pinPixi(plan: NativePlan, current: string): PixiPin {
  const build = plan.native.build;
  const url = plan.options.indexUrl ?? build.indexUrl;
  const lines = current.replace(/\n$/, "").split("\n");
  const notes: string[] = [];
  const why = `torch ${build.torch} ${build.variant} from the PyTorch index runs natively on ${singleLine(plan.target.gpuName)}`;
  // The pins the plan changed (python = "3.9.*" where no runnable torch has a 3.9 wheel).
  for (const change of plan.lineChanges) {
    const at = lineNumber(change.origin, "pixi.toml");
    if (at === null || lines[at] === undefined || CONDA_TORCH.test(lines[at])) continue;
    if (!lines[at].includes(change.from)) continue;
    lines[at] =
      `${lines[at].replace(change.from, change.to)}  # changed by gpuprep init (was ${change.from})`;
    notes.push(`${change.origin}: ${change.from} -> ${change.to}`);
  }
  const dependencies = tables(lines).find((t) => t.name === "dependencies");
  const moved: string[] = [];
  if (dependencies)
    for (let i = dependencies.header + 1; i < dependencies.end; i++) {
      const match = CONDA_TORCH.exec(lines[i]!);
      if (!match) continue;
      const pypi = PYPI_OF[match[1]!];
      if (pypi && !moved.includes(pypi)) moved.push(pypi);
      lines[i] = `# ${lines[i]}  # gpuprep init: ${why} ([pypi-dependencies])`;
    }
  if (!moved.includes("torch")) moved.unshift("torch");
  // A torch-family entry already under [pypi-dependencies] would be a second key: it goes too.
  const pypiTable = tables(lines).find((t) => t.name === "pypi-dependencies");
  if (pypiTable)
    for (let i = pypiTable.header + 1; i < pypiTable.end; i++)
      if (/^\s*(torch|torchvision|torchaudio)\s*=/.test(lines[i]!))
        lines[i] = `# ${lines[i]}  # gpuprep init: ${why}`;
  setSystemCuda(lines, build.cuda);
  addPypiDependencies(lines, moved, build.torch, url);
  notes.push(`${moved.join(", ")} from ${url} under [pypi-dependencies]; the conda torch line commented out`);
  const content = `${lines.join("\n")}\n`;
  parse(content); // the edit must leave valid TOML; a throw here is a bug, not a user error
  return { content, notes };
}

/** [system-requirements] cuda: the CUDA the planned build needs of the driver ("13.0"). */
function setSystemCuda(lines: string[], cuda: string | null): void {
  if (!cuda) return;
  const value = cuda.split(".").slice(0, 2).join(".");
  const table = tables(lines).find((t) => t.name === "system-requirements");
  if (table) {
    for (let i = table.header + 1; i < table.end; i++)
      if (/^\s*cuda\s*=/.test(lines[i]!)) {
        lines[i] =
          `cuda = ${tomlString(value)}  # gpuprep init: the planned torch is built with CUDA ${value}`;
        return;
      }
    lines.splice(table.header + 1, 0, `cuda = ${tomlString(value)}`);
    return;
  }
  lines.push("", "[system-requirements]", `cuda = ${tomlString(value)}`);
}

function addPypiDependencies(lines: string[], names: string[], series: string, url: string): void {
  const entries = names.map(
    (name) =>
      `${name} = { version = ${tomlString(name === "torch" ? `==${series}.*` : "*")}, index = ${tomlString(url)} }`,
  );
  const table = tables(lines).find((t) => t.name === "pypi-dependencies");
  if (table) {
    lines.splice(table.header + 1, 0, ...entries);
    return;
  }
  lines.push(
    "",
    "# Added by gpuprep init: torch from the PyTorch index variant that runs on this GPU.",
    "[pypi-dependencies]",
    ...entries,
  );
}
