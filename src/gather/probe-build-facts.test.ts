// The probe's toolkit, JIT cache and Requires-Dist facts, from real interpreters: Debian's python3,
// this machine's real CUDA 13.0 toolkit (/usr/local/cuda-13.0), real directories, a real
// unprivileged user (setpriv to nobody), and a venv holding a dist-info next to Debian's torch.
import { test } from "node:test";
import assert from "node:assert/strict";
import { chmodSync, existsSync, mkdirSync, readdirSync, realpathSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { execFileSync } from "node:child_process";
import { localTransport } from "../transports/local.js";
import { runProbe } from "./probe.js";
import { DEBIAN_PYTHON, tempDir } from "../../test/support/venv.js";

const fast = { fast: true, timeoutMs: 30_000 };
const CUDA = existsSync("/usr/local/cuda") ? realpathSync("/usr/local/cuda") : null;
const noCuda = CUDA === null && "no CUDA toolkit at /usr/local/cuda on this machine";
const isRoot = process.getuid?.() === 0;

/** An "interpreter" that runs Debian's python3 with `prefix` before it (env settings, setpriv ...). */
function wrapped(prefix: string): string {
  const path = join(tempDir(), "python");
  writeFileSync(path, `#!/bin/sh\nexec ${prefix} ${DEBIAN_PYTHON} "$@"\n`);
  chmodSync(path, 0o755);
  return path;
}

test(
  "toolkit from CUDA_HOME: <home>/bin/nvcc and its `release X.Y`, as torch's cpp_extension reads it",
  { skip: noCuda },
  async () => {
    const out = await runProbe(localTransport(wrapped(`env CUDA_HOME=${CUDA}`)), fast);
    const release = /release (\d+\.\d+)/.exec(
      execFileSync(`${CUDA}/bin/nvcc`, ["--version"], { encoding: "utf8" }),
    )?.[1];
    assert.deepEqual(out.python.toolkit, {
      home: CUDA,
      source: "CUDA_HOME",
      nvcc: `${CUDA}/bin/nvcc`,
      release,
      error: null,
    });
  },
);

test(
  "toolkit: CUDA_HOME wins over nvcc on PATH, even when it holds no nvcc; without either, /usr/local/cuda",
  { skip: noCuda },
  async () => {
    const missing = await runProbe(localTransport(wrapped("env CUDA_HOME=/nonexistent/cuda")), fast);
    assert.equal(missing.python.toolkit?.home, "/nonexistent/cuda");
    assert.equal(missing.python.toolkit?.nvcc, null);
    assert.equal(missing.python.toolkit?.release, null);
    assert.match(missing.python.toolkit?.error ?? "", /no bin\/nvcc under \/nonexistent\/cuda/);
    const fallback = await runProbe(
      localTransport(wrapped("env -u CUDA_HOME -u CUDA_PATH PATH=/usr/bin:/bin")),
      fast,
    );
    assert.equal(fallback.python.toolkit?.source, "default");
    assert.equal(fallback.python.toolkit?.home, "/usr/local/cuda");
    assert.match(fallback.python.toolkit?.release ?? "", /^\d+\.\d+$/);
  },
);

test("cache directories: a path under a file is unwritable even for root; a chmod 555 directory is writable only for root", async () => {
  const readOnly = join(tempDir(), "ro");
  mkdirSync(readOnly);
  chmodSync(readOnly, 0o555);
  const out = await runProbe(
    localTransport(wrapped(`env TRITON_CACHE_DIR=/etc/passwd/x CUDA_CACHE_PATH=${readOnly}`)),
    fast,
  );
  const caches = out.python.cacheDirs;
  assert.ok(caches);
  assert.equal(caches.uid, process.getuid?.());
  const triton = caches.entries.find((e) => e.name === "triton");
  assert.deepEqual(
    [triton?.path, triton?.fromVariable, triton?.exists, triton?.checked, triton?.writable],
    ["/etc/passwd/x", true, false, "/etc/passwd", false],
  );
  const cuda = caches.entries.find((e) => e.name === "cuda-jit");
  assert.deepEqual([cuda?.exists, cuda?.checked, cuda?.writable], [true, readOnly, isRoot]);
  const inductor = caches.entries.find((e) => e.name === "inductor");
  assert.equal(inductor?.fromVariable, false);
  assert.match(inductor?.path ?? "", /\/torchinductor_[^/]+$/);
});

test("cache directories as root: /proc/x and /proc/self are unwritable (found by creating an entry, not os.access)", async () => {
  const existing = join(tempDir(), "cache");
  mkdirSync(existing);
  const out = await runProbe(
    localTransport(
      wrapped(`env TRITON_CACHE_DIR=/proc/x CUDA_CACHE_PATH=/proc/self TORCHINDUCTOR_CACHE_DIR=${existing}`),
    ),
    fast,
  );
  const byName = new Map(out.python.cacheDirs?.entries.map((e) => [e.name, e]));
  // /proc refuses a new entry from everyone, root included; os.access said yes to root.
  assert.deepEqual([byName.get("triton")?.checked, byName.get("triton")?.writable], ["/proc", false]);
  assert.deepEqual([byName.get("cuda-jit")?.exists, byName.get("cuda-jit")?.writable], [true, false]);
  // The silent case: a real directory is writable, and the check leaves nothing behind.
  assert.deepEqual([byName.get("inductor")?.exists, byName.get("inductor")?.writable], [true, true]);
  assert.deepEqual(readdirSync(existing), []);
});

test(
  "cache directories as nobody with HOME=/: ~/.triton and ~/.nv cannot be created",
  { skip: !isRoot && "needs root to setpriv" },
  async () => {
    const out = await runProbe(
      localTransport(
        wrapped(
          "setpriv --reuid=65534 --regid=65534 --clear-groups env -u TRITON_CACHE_DIR -u CUDA_CACHE_PATH -u TRITON_HOME HOME=/ USER=nobody LOGNAME=nobody",
        ),
      ),
      fast,
    );
    const caches = out.python.cacheDirs;
    assert.equal(caches?.uid, 65534);
    const byName = new Map(caches?.entries.map((e) => [e.name, e]));
    assert.deepEqual(
      [byName.get("triton")?.path, byName.get("triton")?.checked, byName.get("triton")?.writable],
      ["/.triton/cache", "/", false],
    );
    assert.deepEqual(
      [byName.get("cuda-jit")?.path, byName.get("cuda-jit")?.writable],
      ["/.nv/ComputeCache", false],
    );
  },
);

test("Requires-Dist: only lines naming torch / triton / pytorch-triton are kept, split into name, specifier, marker", async () => {
  const dir = tempDir();
  execFileSync(DEBIAN_PYTHON, ["-m", "venv", "--system-site-packages", "--without-pip", join(dir, "venv")]);
  const python = join(dir, "venv", "bin", "python");
  const site = execFileSync(python, ["-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"], {
    encoding: "utf8",
  }).trim();
  const info = join(site, "fake_ext-1.0.dist-info");
  mkdirSync(info);
  writeFileSync(
    join(info, "METADATA"),
    "Metadata-Version: 2.1\nName: fake-ext\nVersion: 1.0\nRequires-Dist: numpy\nRequires-Dist: torch (==2.0.0)\n" +
      'Requires-Dist: triton==2.0.0; platform_system == "Linux"\nRequires-Dist: torchvision>=0.15\nRequires-Dist: torch\n\n' +
      "Requires-Dist: torch==9.9 (in the description, not a header)\n",
  );
  const out = await runProbe(localTransport(python), fast);
  const dist = out.python.distributions.find((d) => d.normalizedName === "fake-ext");
  assert.deepEqual(dist?.requires, [
    { normalizedName: "torch", specifier: "==2.0.0", marker: null, raw: "torch (==2.0.0)" },
    {
      normalizedName: "triton",
      specifier: "==2.0.0",
      marker: 'platform_system == "Linux"',
      raw: 'triton==2.0.0; platform_system == "Linux"',
    },
  ]);
  const numpy = out.python.distributions.find((d) => d.normalizedName === "numpy");
  assert.equal(numpy?.requires, undefined, "no torch lines: no field");
});
