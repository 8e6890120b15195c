/**
 * One root cause, one finding (issue 15 item 3), and reinstall fixes right for the installer and
 * for where the wheel comes from, on the real H100 capture of an sm_80-only extension.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { loadKnowledgeBase } from "../../src/kb/index.js";
import { diagnose } from "../../src/diagnose/diagnose.js";
import { installerFor, reinstallCommands } from "../../src/rule-helpers/reinstall-fix.js";
import type { Facts } from "../../src/facts/schema.js";
import { DERIVED, derive, loadCapture } from "./captures.js";
import { ROWS } from "./rule-cases.js";

const kb = loadKnowledgeBase();
const about = (facts: Facts, subject: string) => diagnose(facts, kb).filter((f) => f.subject === subject);

test("an extension without this GPU's arch gives one finding, with a --no-binary build for sm_90", () => {
  const findings = about(loadCapture("h100-extension-sm80-only"), "xformers");
  assert.equal(findings.length, 1, findings.map((f) => f.ruleId).join(", "));
  const [finding] = findings;
  assert.equal(finding?.ruleId, "extension-arch-missing");
  assert.equal(finding?.cause, "arch-missing");
  assert.equal(finding?.severity, "error");
  // The import error's evidence is kept in the merged finding.
  assert.ok(
    finding?.evidence.some((e) => e.label === "error" && /no kernel image is available/.test(e.value)),
    JSON.stringify(finding?.evidence),
  );
  // /opt/torch/.venv is a uv venv (no pip in it): uv pip, reinstalling xformers only, from source for 9.0.
  const build = finding?.fix.commands[0] ?? "";
  assert.match(
    build,
    /^TORCH_CUDA_ARCH_LIST="9\.0" MAX_JOBS=4 uv pip install --python \/opt\/torch\/\.venv\/bin\/python3 /,
  );
  for (const flag of [
    "--no-binary xformers",
    "--no-deps",
    "--no-build-isolation",
    "--reinstall-package xformers",
  ])
    assert.ok(build.includes(flag), `${flag} missing: ${build}`);
  assert.doesNotMatch(build, /--force-reinstall/);
});

test("two causes for the same extension stay two findings", () => {
  const findings = about(DERIVED["h100-extension-sm80-undefined-symbol"]!(), "xformers");
  assert.deepEqual(findings.map((f) => `${f.ruleId}:${f.cause}`).sort(), [
    "extension-arch-missing:arch-missing",
    "extension-import-failed:undefined-symbol",
  ]);
});

test("failures of different extensions are not merged", () => {
  const findings = diagnose(loadCapture("broken-extensions"), kb).filter(
    (f) => f.ruleId === "extension-import-failed",
  );
  assert.deepEqual(findings.map((f) => `${f.subject}:${f.cause}`).sort(), [
    "apex:import-hang",
    "flash-attn:import-crash",
    "xformers:undefined-symbol",
  ]);
});

test("a pip venv gets pip with --force-reinstall and --no-binary; a conda package is removed first", () => {
  // The capture with the interpreter's kind changed (its xformers was installed by pip, as captured).
  const venv = derive("h100-extension-sm80-only", (f) => {
    f.python.interpreter.kind = "venv";
  });
  assert.equal(installerFor(venv, "xformers"), "pip");
  const [build] = about(venv, "xformers")[0]?.fix.commands ?? [];
  assert.match(
    build ?? "",
    /^TORCH_CUDA_ARCH_LIST="9\.0" MAX_JOBS=4 \/opt\/torch\/\.venv\/bin\/python3 -m pip install --no-build-isolation --no-deps --no-cache-dir --force-reinstall --no-binary xformers xformers==0\.0\.0$/,
  );
  // The same with the environment a conda one and xformers installed by conda.
  const conda = derive("h100-extension-sm80-only", (f) => {
    f.python.interpreter.kind = "conda";
    const xformers = f.python.distributions.find((d) => d.normalizedName === "xformers");
    assert.ok(xformers);
    xformers.installer = "conda";
  });
  assert.equal(installerFor(conda, "xformers"), "conda");
  const commands = about(conda, "xformers")[0]?.fix.commands ?? [];
  assert.match(commands[0] ?? "", /^conda remove --force -y xformers\b/);
  assert.match(commands[1] ?? "", /-m pip install .*--no-binary xformers xformers==0\.0\.0$/);
});

test("flash-attn is built with its own arch settings; a plain reinstall keeps torch and the wheel", () => {
  const facts = loadCapture("h100-healthy");
  const [flash] = reinstallCommands(facts, {
    name: "flash-attn",
    version: "2.7.4.post1",
    sourceBuild: { gpu: { major: 9, minor: 0 } },
    noDeps: true,
  });
  assert.match(
    flash ?? "",
    /^FLASH_ATTENTION_FORCE_BUILD=TRUE FLASH_ATTN_CUDA_ARCHS="90" MAX_JOBS=4 uv pip /,
  );
  assert.match(flash ?? "", /--no-binary flash-attn flash-attn==2\.7\.4\.post1$/);
  const [wheel] = reinstallCommands(facts, {
    name: "xformers",
    version: "0.0.29",
    sourceBuild: null,
    noDeps: true,
  });
  assert.equal(
    wheel,
    "uv pip install --python /opt/torch/.venv/bin/python3 --no-deps --no-cache --reinstall-package xformers xformers",
  );
});

test("in uv venvs the reinstall fixes use uv pip; elsewhere pip with --no-deps for extensions", () => {
  const rules = new Set([
    "extension-import-failed",
    "extension-arch-missing",
    "torch-import-failed",
    "pyarrow-cudf-mismatch",
    "numpy-abi-mismatch",
  ]);
  let seen = 0;
  for (const row of ROWS) {
    const facts = DERIVED[row.capture]?.() ?? loadCapture(row.capture);
    const uv = facts.python.interpreter.kind === "uv";
    for (const finding of diagnose(facts, kb).filter((f) => rules.has(f.ruleId)))
      for (const command of finding.fix.commands.filter((c) => /pip install/.test(c))) {
        seen++;
        const installer = /(^|\s)uv pip install --python /.test(command) ? "uv" : "pip";
        assert.equal(installer, uv ? "uv" : "pip", `${row.capture} ${finding.ruleId}: ${command}`);
        if (/--force-reinstall|--reinstall-package/.test(command) && finding.ruleId.startsWith("extension-"))
          assert.match(command, /--no-deps/, `${row.capture}: an extension reinstall must leave torch alone`);
      }
  }
  assert.ok(seen >= 10, `only ${seen} install commands checked`);
});

test("torch without this GPU's arch: one finding, the arch list's, with the binaries and the kernel as evidence", () => {
  const findings = about(DERIVED["h100-healthy-on-v100"]!(), "torch");
  assert.deepEqual(
    findings.map((f) => `${f.ruleId}:${f.cause}:${f.severity}`),
    ["torch-arch-not-covered:arch-missing:error"],
  );
  const labels = findings[0]?.evidence.map((e) => e.label) ?? [];
  assert.ok(labels.includes("also found by torch-binary-arch-missing"), labels.join(", "));
  assert.ok(labels.includes("also found by torch-kernel-launch-failed"), labels.join(", "));
  assert.ok(labels.includes("kernel error"), labels.join(", "));
  // A kernel that fails for another cause stays its own finding.
  const oom = about(DERIVED["h100-healthy-kernel-out-of-memory"]!(), "torch");
  assert.deepEqual(
    oom.map((f) => `${f.ruleId}:${f.cause}`),
    ["torch-kernel-launch-failed:out-of-memory"],
  );
});
