/**
 * doctor and validate judge TF32, torch's arch coverage and the SDPA switches with the same
 * judgments (src/judge/): fed the same state, a rule and its validate check reach the same
 * verdict, under the same id, in the same words. The state is one real machine seen by both:
 * h100-healthy.json (doctor --save) and report-h100.json's payload (validate), both from the
 * H100 device machine with torch 2.11.0+cu130; each case changes the same field on both sides.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { loadKnowledgeBase } from "../../src/kb/index.js";
import { RULES } from "../../src/rules/registry.js";
import type { Facts } from "../../src/facts/schema.js";
import type { Finding } from "../../src/findings/types.js";
import { judgePayload } from "../../src/validate/judge.js";
import { parsePayload, type Payload, type PayloadEnv } from "../../src/validate/payload.js";
import type { ValidateReport } from "../../src/validate/report.js";
import { severityOf, statusOf, verdictOfStatus, type Verdict } from "../../src/judge/vocabulary.js";
import { derive, loadCapture } from "../doctor/captures.js";
import { FIXTURES } from "../validate/fixtures.js";

const kb = loadKnowledgeBase();

type TorchLive = NonNullable<Facts["python"]["torchLive"]["result"]>;

type Env = PayloadEnv & { sdpaEnabled?: Record<string, boolean | null> };

/** One change made to both sides: the probe's torch view (doctor) and the payload's env (validate). */
interface Case {
  name: string;
  doctor: (live: TorchLive, facts: Facts) => void;
  validate: (env: Env, payload: Payload) => void;
  /** The verdict both must reach, per rule id. */
  expect: Record<string, Verdict>;
}

/** Which validate item carries each shared rule id (ids stay stable for validate's users). */
const CHECK_OF: Record<string, string> = {
  "tf32-disabled": "check.tf32",
  "torch-arch-not-covered": "check.arch",
  "sdpa-fast-kernels-off": "check.sdpa-backends",
  "torch-import-failed": "check.torch-import",
  "torch-kernel-launch-failed": "check.kernel",
};

// The error text of pytorch/pytorch#111469 (as test/doctor/captures.ts's h100-healthy-torch-import-error).
const IMPORT_ERROR =
  "ImportError: /usr/local/lib/python3.10/dist-packages/torch/lib/../../nvidia/cusparse/lib/libcusparse.so.12: undefined symbol: __nvJitLinkAddData_12_1, version libnvJitLink.so.12";

const CASES: Case[] = [
  {
    name: "as captured: TF32 off (torch's default), sm_90 SASS, every SDPA backend on",
    doctor: () => {},
    validate: () => {},
    expect: {
      "tf32-disabled": "info",
      "torch-arch-not-covered": "pass",
      "sdpa-fast-kernels-off": "pass",
      "torch-import-failed": "pass",
      "torch-kernel-launch-failed": "pass",
    },
  },
  {
    // As test/doctor/captures.ts's h100-healthy-kernel-out-of-memory.
    name: "the kernel check runs out of GPU memory",
    doctor: (live) => {
      live.kernel = { ran: true, ok: false, relError: null, error: "CUDA error: out of memory" };
    },
    validate: (env) => {
      env.kernel = { ran: true, ok: false, relError: null, error: "CUDA error: out of memory" };
    },
    expect: { "torch-kernel-launch-failed": "error" },
  },
  {
    name: "import torch raises (a CUDA library of another version)",
    doctor: (_live, facts) => {
      facts.python.torchLive = {
        ...facts.python.torchLive,
        status: "error",
        exitCode: 1,
        error: IMPORT_ERROR,
        result: null,
      };
    },
    validate: (_env, payload) => {
      payload.env = {
        run: { ...payload.env.run, status: "error", exitCode: 1, error: IMPORT_ERROR, stderrTail: null },
        result: null,
      };
    },
    expect: { "torch-import-failed": "error" },
  },
  {
    name: 'TF32 on through set_float32_matmul_precision("high")',
    doctor: (live) => {
      live.tf32.matmul = true;
      live.float32MatmulPrecision = "high";
    },
    validate: (env) => {
      env.tf32.matmul = true;
      env.tf32.float32MatmulPrecision = "high";
    },
    expect: { "tf32-disabled": "pass" },
  },
  {
    name: "a torch built for Turing and Ampere only: no code for sm_90",
    doctor: (live) => {
      live.archList = ["sm_75", "sm_80", "sm_86"];
    },
    validate: (env) => {
      env.archList = ["sm_75", "sm_80", "sm_86"];
    },
    expect: { "torch-arch-not-covered": "error" },
  },
  {
    name: "a torch with Ampere SASS and compute_86 PTX: sm_90 only through the JIT",
    doctor: (live) => {
      live.archList = ["sm_80", "sm_86", "compute_86"];
    },
    validate: (env) => {
      env.archList = ["sm_80", "sm_86", "compute_86"];
    },
    expect: { "torch-arch-not-covered": "warning" },
  },
  {
    name: "flash and memory-efficient SDPA switched off at import",
    doctor: (live) => {
      live.sdpa.flash = false;
      live.sdpa.efficient = false;
    },
    validate: (env) => {
      env.sdpaEnabled = { ...env.sdpaEnabled, flash: false, efficient: false };
    },
    expect: { "sdpa-fast-kernels-off": "warning" },
  },
  {
    name: "only flash switched off",
    doctor: (live) => {
      live.sdpa.flash = false;
    },
    validate: (env) => {
      env.sdpaEnabled = { ...env.sdpaEnabled, flash: false };
    },
    expect: { "sdpa-fast-kernels-off": "info" },
  },
];

function h100Payload(change: Case["validate"]): Payload {
  const file = join(FIXTURES, "report-h100.json");
  const report = JSON.parse(readFileSync(file, "utf8")) as ValidateReport;
  const payload = parsePayload(structuredClone(report.payload), file);
  assert.ok(payload.env.result, "report-h100.json has a torch env");
  change(payload.env.result, payload);
  return payload;
}

function doctorFindings(change: Case["doctor"], ruleId: string): Finding[] {
  const facts = derive("h100-healthy", (f) => change(f.python.torchLive.result!, f));
  const rule = RULES.find((r) => r.id === ruleId);
  assert.ok(rule, `rule ${ruleId} is registered`);
  return rule.check(facts, kb);
}

for (const c of CASES) {
  test(`doctor and validate agree: ${c.name}`, () => {
    const items = judgePayload(h100Payload(c.validate), kb, { transport: "local" }).items;
    for (const [ruleId, verdict] of Object.entries(c.expect)) {
      const item = items.find((i) => i.id === CHECK_OF[ruleId]);
      assert.ok(item, `validate has ${CHECK_OF[ruleId]}`);
      assert.equal(item.ruleId, ruleId, `${item.id} carries the rule id`);
      assert.match(item.docs ?? "", new RegExp(`/docs/rules/${ruleId}\\.md$`));
      assert.equal(item.status, statusOf(verdict), `validate ${item.id}: ${item.reason}`);

      const findings = doctorFindings(c.doctor, ruleId);
      const severity = severityOf(verdict);
      if (severity === null) {
        assert.deepEqual(findings, [], `doctor ${ruleId} stays silent on ${verdict}`);
        continue;
      }
      assert.equal(findings.length, 1, `doctor ${ruleId} finds once`);
      const finding = findings[0]!;
      assert.equal(finding.severity, severity);
      assert.equal(finding.docs, item.docs, "the same page");
      // validate says the same message, then what only it measured and the fix.
      assert.ok(
        item.reason.startsWith(finding.message),
        `same words:\n  doctor:   ${finding.message}\n  validate: ${item.reason}`,
      );
    }
  });
}

test("doctor and validate agree on three real broken extensions: an undefined symbol, a SIGSEGV, a hang", () => {
  // broken-extensions.json: the three packages of test/fixtures/builders, imported by the probe.
  const facts = loadCapture("broken-extensions");
  const rule = RULES.find((r) => r.id === "extension-import-failed");
  assert.ok(rule);
  const findings = rule.check(facts, kb);
  // validate's payload, its extensions replaced by the same child runs.
  const payload = h100Payload(() => {});
  payload.extensions = facts.python.extensions.map((ext) => ({
    module: ext.module,
    installed: true,
    run: {
      status: ext.status === "skipped" ? "error" : ext.status,
      durationMs: ext.durationMs,
      exitCode: ext.exitCode,
      signal: ext.signal,
      error: ext.error,
      stderrTail: ext.stderrTail,
    },
    result: null,
  }));
  const items = judgePayload(payload, kb, { transport: "local" }).items;
  const verdicts: Record<string, Verdict> = { xformers: "error", flash_attn: "error", apex: "warning" };
  assert.deepEqual(facts.python.extensions.map((e) => e.module).sort(), Object.keys(verdicts).sort());
  for (const [module, verdict] of Object.entries(verdicts)) {
    const finding = findings.find((f) => f.message.startsWith(`import ${module} `));
    const item = items.find((i) => i.id === `check.extension.${module}`);
    assert.ok(finding && item, module);
    assert.equal(finding.severity, severityOf(verdict), `doctor ${module}`);
    assert.equal(item.status, statusOf(verdict), `validate ${module}: ${item.reason}`);
    assert.equal(item.ruleId, finding.ruleId);
    assert.ok(item.reason.startsWith(finding.message), `same words:\n  ${finding.message}\n  ${item.reason}`);
  }
});

test("one table maps verdicts to both commands' words", () => {
  const verdicts: Verdict[] = ["error", "warning", "info", "pass", "skip"];
  assert.deepEqual(
    verdicts.map((v) => [statusOf(v), severityOf(v)]),
    [
      ["fail", "error"],
      ["warn", "warning"],
      ["info", "info"],
      ["pass", null],
      ["skip", null],
    ],
  );
  for (const v of verdicts) assert.equal(verdictOfStatus(statusOf(v)), v, `${v} survives a round trip`);
});

test("the parity check sees a drift (it can fail)", () => {
  // The same payload judged with allow_tf32 on, against doctor's finding for it off: they differ.
  const items = judgePayload(
    h100Payload((env) => {
      env.tf32.matmul = true;
    }),
    kb,
    { transport: "local" },
  ).items;
  const finding = doctorFindings(() => {}, "tf32-disabled")[0];
  const item = items.find((i) => i.id === "check.tf32");
  assert.ok(finding && item);
  assert.notEqual(item.status, statusOf(finding.severity));
  assert.ok(!item.reason.startsWith(finding.message));
});
