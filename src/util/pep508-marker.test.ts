/**
 * PEP 508 markers by example. Every full-environment expectation is what Python's packaging 23.0
 * answers (Marker(m).evaluate(env) on Debian's /usr/bin/python3; an exception there is null here);
 * src/util/pep440-differential.test.ts checks a generated corpus the same way.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { Marker, evaluateMarker, parseMarker, type MarkerEnvironment } from "./pep508-marker.js";

const gb10: MarkerEnvironment = {
  platform_machine: "aarch64",
  sys_platform: "linux",
  platform_system: "Linux",
  os_name: "posix",
  python_version: "3.12",
};

const full: MarkerEnvironment = {
  ...gb10,
  implementation_name: "cpython",
  implementation_version: "3.12.3",
  platform_release: "6.8.0-45-generic",
  platform_version: "#1",
  python_full_version: "3.12.3",
  platform_python_implementation: "CPython",
  extra: "",
};

test("markers on a Linux aarch64 machine with Python 3.12", () => {
  const cases: [string, boolean | null][] = [
    ["sys_platform == 'linux'", true],
    ['sys_platform == "darwin"', false],
    ["platform_machine == 'x86_64' and sys_platform == 'linux'", false],
    ["platform_machine == 'x86_64' or platform_machine == 'aarch64'", true],
    ["(platform_system != 'Darwin') and python_version >= '3.10'", true],
    ["python_version < '3.12'", false],
    ["'linux' in sys_platform", true],
    ["extra == 'cu118'", null],
    ["extra == 'cu118' and sys_platform == 'darwin'", false],
    ["platform_machine === ", null],
  ];
  for (const [marker, expected] of cases) assert.equal(evaluateMarker(marker, gb10), expected, marker);
});

test("with every variable known, the answers are packaging's", () => {
  const cases: [string, boolean | null][] = [
    ['python_version >= "3.10"', true],
    ['python_version > "3.12"', false],
    ['python_version == "3.12.*"', true],
    ['python_full_version < "3.13.0rc1"', true],
    ['"3.9" < python_version', true],
    ['sys_platform < "m"', true /* no specifier: Python's string order */],
    ['platform_machine in "x86_64 aarch64"', true],
    ['python_version === "3.12"', true],
    ['platform_release >= "5.10"', null /* packaging raises InvalidVersion on 6.8.0-45-generic */],
    ['os_name ~= "posix"', null /* UndefinedComparison */],
    ['"a" == "a"', null /* both sides values: packaging looks "a" up as a variable (KeyError) */],
    ['extra == "Dev_Tools"', false],
  ];
  for (const [marker, expected] of cases) assert.equal(evaluateMarker(marker, full), expected, marker);
  assert.equal(
    evaluateMarker('extra == "Dev_Tools"', { ...full, extra: "dev-tools" }),
    true,
    "PEP 685 names",
  );
});

test("parsed once: packaging's normal form, and its reasons for refusing", () => {
  const marker = parseMarker("python_version>='3.10'and(extra=='Dev_Tools' or os.name=='nt')");
  assert.ok(marker instanceof Marker);
  assert.equal(marker.toString(), 'python_version >= "3.10" and (extra == "Dev_Tools" or os_name == "nt")');
  const normal = (text: string) => {
    const parsed = parseMarker(text);
    assert.ok(parsed instanceof Marker, text);
    return parsed.toString();
  };
  assert.equal(normal("extra == 'Dev_Tools'"), 'extra == "dev-tools"');
  assert.equal(normal('python_version >= "3.10" garbage'), 'python_version >= "3.10"');
  const invalid = parseMarker("python_version ?? '3'");
  assert.ok(!(invalid instanceof Marker));
  assert.match(invalid.message, /Expected marker operator/);
});
