import { test } from "node:test";
import assert from "node:assert/strict";
import { evaluateMarker, type MarkerEnvironment } from "./pep508-marker.js";

const gb10: MarkerEnvironment = {
  platform_machine: "aarch64",
  sys_platform: "linux",
  platform_system: "Linux",
  os_name: "posix",
  python_version: "3.12",
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
