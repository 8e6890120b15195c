/**
 * The rules on the probe's toolkit, cache and Requires-Dist facts, through `gpuprep doctor` on
 * real interpreters: a venv over Debian's torch 1.13 holding a dist-info that pins torch, and
 * Debian's python3 run as root and as nobody (setpriv) against real directories.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync, execFileSync } from "node:child_process";
import { chmodSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { DEBIAN_PYTHON, tempDir } from "../support/venv.js";

const CLI = fileURLToPath(new URL("../../src/cli/main.js", import.meta.url));
const isRoot = process.getuid?.() === 0;

interface Report {
  findings: {
    ruleId: string;
    severity: string;
    evidence: { label: string; value: string }[];
    fix: { commands: string[] };
  }[];
}

function doctor(python: string, env: NodeJS.ProcessEnv = {}): Report {
  const cwd = tempDir("gpuprep-live-");
  const result = spawnSync(process.execPath, [CLI, "doctor", "--python", python, "--fast", "--json"], {
    cwd,
    encoding: "utf8",
    env: { ...process.env, ...env },
  });
  assert.equal(result.stderr, "", "no error output");
  return JSON.parse(result.stdout) as Report;
}

/** A venv over Debian's torch 1.13 holding dist-infos: [name, version, Requires-Dist lines]. */
function venvWith(...dists: [string, string, string[]][]): string {
  const dir = tempDir();
  execFileSync(DEBIAN_PYTHON, ["-m", "venv", "--system-site-packages", "--without-pip", join(dir, "venv")]);
  const python = join(dir, "venv", "bin", "python");
  const site = execFileSync(python, ["-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"], {
    encoding: "utf8",
  }).trim();
  for (const [name, version, requires] of dists) {
    const info = join(site, `${name}-${version}.dist-info`);
    mkdirSync(info);
    const lines = requires.map((r) => `Requires-Dist: ${r}\n`).join("");
    writeFileSync(
      join(info, "METADATA"),
      `Metadata-Version: 2.1\nName: ${name}\nVersion: ${version}\n${lines}\n`,
    );
    writeFileSync(join(info, "INSTALLER"), "pip\n");
  }
  return python;
}

const venvRequiring = (torchRequirement: string) => venvWith(["torchvision", "0.15.1", [torchRequirement]]);

test("installed-torch-pin-conflict: torch==2.0.0 against Debian's torch 1.13 fires with a pip fix for this venv; ==1.13.* (its series) is silent", () => {
  const conflicting = venvRequiring("torch (==2.0.0)");
  const finding = doctor(conflicting).findings.find((f) => f.ruleId === "installed-torch-pin-conflict");
  assert.equal(finding?.severity, "error");
  assert.deepEqual(finding?.fix.commands, [`${conflicting} -m pip install "torch==2.0.0"`]);
  const fitting = venvRequiring("torch (==1.13.*)");
  assert.equal(
    doctor(fitting).findings.find((f) => f.ruleId === "installed-torch-pin-conflict"),
    undefined,
  );
});

test("installed-torch-pin-conflict: torch's own triton pin against another installed triton", () => {
  // torch 2.5.1's METADATA pins triton 3.1.0 on Linux x86_64 (F38: triton 3.0.0 left installed).
  const python = venvWith(
    ["torch", "2.5.1", ['triton==3.1.0; platform_system == "Linux" and platform_machine == "x86_64"']],
    ["triton", "3.0.0", []],
  );
  const findings = doctor(python).findings.filter((f) => f.ruleId === "installed-torch-pin-conflict");
  const triton = findings.find((f) => f.evidence.some((e) => e.label === "installed triton"));
  if (process.arch === "x64") {
    assert.equal(triton?.severity, "error");
    assert.deepEqual(triton?.fix.commands, [`${python} -m pip install "triton==3.1.0"`]);
  } else assert.equal(triton, undefined, "the marker limits the pin to x86_64");
});

test("installed-torch-pin-conflict: triton and pytorch-triton both installed are one finding: remove both, install torch's pin", () => {
  const python = venvWith(
    ["torch", "2.5.1", ['triton==3.1.0; platform_system == "Linux"']],
    ["triton", "3.0.0", []],
    ["pytorch-triton", "3.1.0+cf34004b8a", []],
  );
  const findings = doctor(python).findings.filter((f) => f.ruleId === "installed-torch-pin-conflict");
  assert.equal(findings.length, 1, JSON.stringify(findings));
  assert.deepEqual(findings[0]?.fix.commands, [
    `${python} -m pip uninstall -y triton pytorch-triton`,
    `${python} -m pip install "triton==3.1.0"`,
  ]);
});

test(
  "jit-cache-unwritable: silent for root on a chmod 555 directory (root writes there), an error for nobody",
  { skip: !isRoot && "needs root" },
  () => {
    const readOnly = join(tempDir(), "triton-cache");
    mkdirSync(readOnly);
    chmodSync(readOnly, 0o555);
    const asRoot = doctor(DEBIAN_PYTHON, { TRITON_CACHE_DIR: readOnly });
    assert.equal(
      asRoot.findings.find((f) => f.ruleId === "jit-cache-unwritable"),
      undefined,
    );

    const nobody = join(tempDir(), "python");
    writeFileSync(
      nobody,
      `#!/bin/sh\nexec setpriv --reuid=65534 --regid=65534 --clear-groups env HOME=/ ${DEBIAN_PYTHON} "$@"\n`,
    );
    chmodSync(nobody, 0o755);
    const finding = doctor(nobody, { TRITON_CACHE_DIR: readOnly }).findings.find(
      (f) => f.ruleId === "jit-cache-unwritable",
    );
    assert.equal(finding?.severity, "error");
    const labels = finding?.evidence.map((e) => e.label);
    assert.ok(labels?.includes("TRITON_CACHE_DIR") && labels.includes("CUDA_CACHE_PATH"), labels?.join(", "));
    assert.ok(finding?.fix.commands.some((c) => c.startsWith("export TRITON_CACHE_DIR=")));
  },
);
