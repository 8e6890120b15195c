/**
 * torch_env.py is the one torch-environment child of doctor's probe and validate: the build puts
 * its text into both payloads (each travels as one file), its NCCL decoding reads every form torch
 * returns, and the Python payloads compile for Python 3.8 and pass pyflakes.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync, spawnSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { readFactsFile } from "../src/facts/io.js";
import { needs, PYFLAKES } from "./support/needs.js";
import { DEBIAN_PYTHON, tempDir } from "./support/venv.js";

/** Tests run from dist/test; the sources stay in the repository. */
const REPO = fileURLToPath(new URL("../../", import.meta.url));
const SHARED = "src/probe/torch_env.py";
const PAYLOADS = ["src/probe/probe.py", "src/validate/validate.py"];
const PYTHON_FILES = [SHARED, ...PAYLOADS, "src/memory/memory.py"];

/** `code` run by Debian's python3 with `args`; its stdout. */
function python(code: string, ...args: string[]): string {
  return execFileSync(DEBIAN_PYTHON, ["-c", code, ...args], { encoding: "utf8" });
}

test("each built payload carries torch_env.py byte for byte; the source keeps only the marker", () => {
  const shared = readFileSync(join(REPO, SHARED), "utf8");
  for (const payload of PAYLOADS) {
    assert.match(
      readFileSync(join(REPO, payload), "utf8"),
      /^TORCH_ENV_SOURCE = None {2}# @inline \S*torch_env\.py$/m,
      `${payload} names torch_env.py at its marker instead of holding a copy`,
    );
    // What the interpreter reads from the literal, i.e. what the payload runs as its child.
    const inlined = python(
      "import runpy, sys; sys.stdout.write(runpy.run_path(sys.argv[1], run_name='inline_check')['TORCH_ENV_SOURCE'])",
      join(REPO, "dist", payload),
    );
    assert.equal(inlined, shared, `dist/${payload} holds src/probe/torch_env.py as it is now`);
  }
});

test("the build refuses to inline a file a raw triple-quoted literal cannot hold", async () => {
  const dir = tempDir("gpuprep-inline-");
  writeFileSync(join(dir, "part.py"), "X = '''quoted'''\n");
  writeFileSync(join(dir, "host.py"), "PART = None  # @inline part.py\n");
  const { inlinePython } = (await import(pathToFileURL(join(REPO, "scripts", "inline-python.mjs")).href)) as {
    inlinePython: (path: string) => string;
  };
  assert.throws(() => inlinePython(join(dir, "host.py")), /part\.py cannot be inlined into .*host\.py/);
  writeFileSync(join(dir, "part.py"), 'X = "a\\\\b"\n');
  assert.equal(inlinePython(join(dir, "host.py")), "PART = r'''X = \"a\\\\b\"\n'''  # @inline part.py\n");
});

test("NCCL versions read as major.minor.patch from the int (old torch) and tuple forms", () => {
  const decoded = JSON.parse(
    python(
      [
        "import json, sys",
        "ns = {'__name__': 'torch_env'}",
        "exec(open(sys.argv[1]).read(), ns)",
        "f = ns['nccl_version_text']",
        // NCCL_VERSION_CODE before NCCL 2.9 (x1000) and since (x10000); torch >= 1.10 tuples, a
        // fourth item being NCCL_SUFFIX (torch >= 2.1, when not empty).
        "print(json.dumps([f(2708), f(21803), f(22707), f((2, 18, 3)), f((2, 21, 5, 'a0')), f([2, 27, 7])]))",
      ].join("\n"),
      join(REPO, SHARED),
    ),
  ) as string[];
  assert.deepEqual(decoded, ["2.7.8", "2.18.3", "2.27.7", "2.18.3", "2.21.5+a0", "2.27.7"]);
});

test("the Python payloads parse as Python 3.8 and pass pyflakes", (t) => {
  const files = [...PYTHON_FILES, ...PAYLOADS.map((p) => join("dist", p))].map((f) => join(REPO, f));
  // ast.parse with feature_version rejects syntax newer than 3.8; nothing is written (no __pycache__).
  python(
    "import ast, sys\nfor f in sys.argv[1:]: ast.parse(open(f).read(), f, feature_version=(3, 8))",
    ...files,
  );
  if (needs(t, PYFLAKES)) return;
  const lint = spawnSync(DEBIAN_PYTHON, ["-m", "pyflakes", ...files], { encoding: "utf8" });
  assert.equal(lint.status, 0, `pyflakes:\n${lint.stdout}${lint.stderr}`);
});

test("a snapshot from before torch_env.py (sdpa.memEfficient) reads with sdpa.efficient", () => {
  const file = join(REPO, "test", "fixtures", "facts", "h100-healthy.json");
  const raw = JSON.parse(readFileSync(file, "utf8")) as {
    python: { torchLive: { result: { sdpa: Record<string, boolean | null> } } };
  };
  const old = raw.python.torchLive.result.sdpa;
  assert.ok("memEfficient" in old, "the capture still has the old key (else this test proves nothing)");
  const sdpa = readFactsFile(file).python.torchLive.result?.sdpa;
  assert.deepEqual(sdpa, {
    flash: old["flash"],
    efficient: old["memEfficient"],
    math: old["math"],
    cudnn: old["cudnn"],
  });
});
