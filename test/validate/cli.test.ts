/** `gpuprep validate` as a user runs it: exit codes, one-line errors, JUnit and JSON outputs. */
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { FIXTURES } from "./fixtures.js";
import { needs, PYTHON3_TORCH } from "../support/needs.js";

const MAIN = join(import.meta.dirname, "..", "..", "src", "cli", "main.js");
const work = mkdtempSync(join(tmpdir(), "gpuprep-validate-cli-"));
const gpuprep = (...args: string[]) =>
  spawnSync(process.execPath, [MAIN, "validate", ...args], { encoding: "utf8" });

test("bad input is one line and a hint, exit 2", () => {
  const notJson = join(work, "not.json");
  writeFileSync(notJson, "{}");
  const cases: Array<[string[], RegExp]> = [
    [["--only", "matmul,bogus"], /--only does not know "bogus"/],
    [["--model", join(work, "missing.safetensors")], /--model .* does not exist/],
    [["--python", join(work, "no-such-python")], /Python interpreter ".*no-such-python" was not found/],
    [["--from", notJson], /is not a validate report/],
    [["--frobnicate"], /validate: Unknown option '--frobnicate'/],
  ];
  for (const [args, message] of cases) {
    const run = gpuprep(...args);
    assert.equal(run.status, 2, `${args.join(" ")}: ${run.stderr}`);
    const lines = run.stderr.trim().split("\n");
    assert.equal(lines.length, 2, run.stderr);
    assert.match(lines[0] ?? "", message);
    assert.match(lines[1] ?? "", /^ {2}hint: /);
  }
});

test("a failing run exits 1 and writes well-formed JUnit XML with one case per item", () => {
  const file = join(FIXTURES, "report-debian-torch-cpu.json");
  const saved = JSON.parse(readFileSync(file, "utf8")) as {
    summary: Record<string, number>;
    items: unknown[];
  };
  const xml = join(work, "validate.xml");
  const run = gpuprep("--from", file, "--junit", xml);
  assert.equal(run.status, 1, run.stderr);
  assert.match(run.stdout, /FAIL\s+torch built with CUDA/);
  // Python's XML parser reads it back: counts match the report.
  const parsed = spawnSync(
    "python3",
    [
      "-c",
      "import sys,json,xml.etree.ElementTree as E;r=E.parse(sys.argv[1]).getroot();print(json.dumps([r.get('tests'),r.get('failures'),r.get('skipped'),len(r.findall('.//testcase')),len(r.findall('.//failure')),len(r.findall('.//skipped'))]))",
      xml,
    ],
    { encoding: "utf8" },
  );
  assert.equal(parsed.status, 0, parsed.stderr);
  const [tests, failures, skipped, cases, failureTags, skippedTags] = JSON.parse(parsed.stdout) as [
    string,
    string,
    string,
    number,
    number,
    number,
  ];
  assert.equal(Number(tests), saved.items.length);
  assert.equal(cases, saved.items.length);
  assert.equal(Number(failures), saved.summary.fail);
  assert.equal(failureTags, saved.summary.fail);
  assert.equal(Number(skipped), saved.summary.skip);
  assert.equal(skippedTags, saved.summary.skip);
});

test("--json prints the report with its raw payload", () => {
  const run = gpuprep("--from", join(FIXTURES, "report-no-torch.json"), "--json");
  assert.equal(run.status, 1);
  const report = JSON.parse(run.stdout) as {
    schema: string;
    payload: { schema: string };
    items: Array<{ id: string; status: string }>;
  };
  assert.equal(report.schema, "gpuprep.validate");
  assert.equal(report.payload.schema, "gpuprep.validate.payload");
  assert.equal(report.items.find((i) => i.id === "check.torch-import")?.status, "fail");
});

test("--save writes the report --from judges again; --from refuses the flags of a run", (t) => {
  if (needs(t, PYTHON3_TORCH)) return;
  const saved = join(work, "saved.json");
  const run = gpuprep("--python", "/usr/bin/python3", "--only", "checks", "--save", saved);
  assert.ok(run.status === 0 || run.status === 1, run.stderr);
  const report = JSON.parse(readFileSync(saved, "utf8")) as { schema: string; items: Array<{ id: string }> };
  assert.equal(report.schema, "gpuprep.validate");
  const again = gpuprep("--from", saved, "--json");
  assert.equal(again.status, run.status, again.stderr);
  const replayed = JSON.parse(again.stdout) as { items: Array<{ id: string }> };
  assert.deepEqual(
    replayed.items.map((i) => i.id),
    report.items.map((i) => i.id),
  );
  for (const flag of [["--quick"], ["--python", "python3"], ["--save", join(work, "again.json")]]) {
    const refused = gpuprep("--from", saved, ...flag);
    assert.equal(refused.status, 2, flag.join(" "));
    assert.match(
      refused.stderr,
      new RegExp(
        `^gpuprep: error: validate: --from judges a saved report; ${flag[0]} applies only when validate runs\\n {2}hint: `,
      ),
    );
  }
});

test("--compare: two real H100 reports side by side, environment first, every figure with B / A", () => {
  const a = join(FIXTURES, "report-h100.json");
  const b = join(FIXTURES, "report-h100-issue27.json");
  const html = join(work, "compare.html");
  const run = spawnSync(process.execPath, [MAIN, "validate", "--compare", a, b, "--html", html], {
    encoding: "utf8",
    env: { ...process.env, NO_COLOR: "1" },
  });
  assert.equal(run.status, 0, run.stderr);
  const text = run.stdout;
  assert.ok(text.indexOf("Environment") < text.indexOf("Figures"), "the environment comes above the figures");
  assert.match(text, /driver\s+not recorded\s+580\.159\.04\s+not recorded in one/);
  assert.match(text, /torch\s+2\.11\.0\+cu130\s+2\.11\.0\+cu130\s+same/);
  // bf16 8192^3: 710.5 TFLOP/s on 2026-11-22, 689 on 2026-11-27.
  assert.match(text, /bfloat16 matmul 8192x8192x8192\s+710\s+689\s+TFLOP\/s\s+0\.97x\s+pass/);
  assert.match(text, /fp8 e4m3 GEMM \(torch\._scaled_mm\)\s+-\s+1262\s+TFLOP\/s\s+only in B/);
  assert.match(text, /\d+ figures: 0 higher in B, 0 lower, \d+ within 5%; 0 only in A, \d+ only in B/);
  assert.match(readFileSync(html, "utf8"), /<h1>gpuprep validate --compare<\/h1>/);
});

test("--compare, --seq-len, --batch and --jit-smoke refuse bad input in one line with a hint", () => {
  const report = join(FIXTURES, "report-h100.json");
  const cases: Array<[string[], RegExp]> = [
    [["--compare", report], /--compare takes two saved reports, got 1/],
    [["--compare", report, report, "--quick"], /--compare reads two saved reports; --quick does not apply/],
    [["--compare", report, join(work, "missing.json")], /missing\.json/],
    [[report], /unexpected argument ".*report-h100\.json"/],
    [["--seq-len", "512"], /--seq-len shapes the MFU step, which needs --model/],
    [["--model", report, "--batch", "0"], /--batch 0 is not a positive whole number/],
    [["--jit-smoke", "not a spec"], /--jit-smoke "not a spec" is not MODULE:FUNCTION/],
  ];
  for (const [args, message] of cases) {
    const run = gpuprep(...args);
    assert.equal(run.status, 2, `${args.join(" ")}: ${run.stderr}`);
    const lines = run.stderr.trim().split("\n");
    assert.equal(lines.length, 2, run.stderr);
    assert.match(lines[0] ?? "", message);
    assert.match(lines[1] ?? "", /^ {2}hint: /);
  }
});

test("--from keeps the capture's createdAt and adds judgedAt", () => {
  const file = join(FIXTURES, "report-h100-issue27.json");
  const saved = JSON.parse(readFileSync(file, "utf8")) as { createdAt: string };
  const run = gpuprep("--from", file, "--json");
  const again = JSON.parse(run.stdout) as { createdAt: string; judgedAt?: string };
  assert.equal(again.createdAt, saved.createdAt);
  assert.ok(again.judgedAt && again.judgedAt > saved.createdAt);
});
