// The settings schema of src/settings/schema.ts written for zod/mini, for bench/footprint/measure.sh:
// its JSON Schema is compared with the one zod generates (schemas/gpuprep.settings.v1.schema.json).
import * as z from "zod/mini";
const driverText = z
  .string()
  .check(z.regex(/^\d+(\.\d+){0,2}$/, "a driver version such as 580.95.05, or a branch such as 580"));
const d = (s, text) => s.check(z.describe(text));
const Settings = z.partial(
  z.strictObject({
    target: d(
      z.string().check(z.minLength(1)),
      "The machine the project is for, as --target names it: a system (dgx-spark, jetson-thor) or a GPU (h100, rtx-5090). init plans for it, memory takes its GPU's memory, and `doctor --target` judges the project for it.",
    ),
    driver: d(
      z.union([driverText, z.int().check(z.positive())]),
      'The target\'s NVIDIA driver (--driver): "580.95.05", or a branch, 580. Used only with a target.',
    ),
    arch: d(z.enum(["x86_64", "aarch64"]), "The target's CPU (--arch). Used only with a target."),
    strategy: d(
      z.enum(["container", "native", "auto"]),
      "init --strategy: an NGC container, a native uv venv, or auto (the one that keeps every pin).",
    ),
    python: d(
      z.string().check(z.regex(/^3\.\d+(\.\d+)?$/, "a Python version such as 3.12")),
      "init --python: the Python of the native venv.",
    ),
    "build-from-source": d(
      z.array(
        z.string().check(z.regex(/^[A-Za-z0-9]([A-Za-z0-9._-]*[A-Za-z0-9])?$/, "a package name as on PyPI")),
        { error: 'a list of package names, e.g. ["flash-attn"]' },
      ),
      "init --build-from-source: extensions compiled for exactly the target GPU.",
    ),
    jupyter: d(
      z.boolean({ error: "true or false" }),
      "init --jupyter: a Jupyter service in the container setup.",
    ),
    "non-root": d(
      z.boolean({ error: "true or false" }),
      "init --non-root: run as the host user's ids instead of root.",
    ),
    volumes: d(
      z.array(z.string().check(z.minLength(1)), { error: 'a list of volumes, e.g. ["/data:/data:ro"]' }),
      "init --volume: more volumes, each HOST:CTR[:ro|rw].",
    ),
    "shm-size": d(
      z.string().check(z.regex(/^\d+[bkmg]?$/i, "a size such as 16g")),
      "init --shm-size: a /dev/shm of this size.",
    ),
    "index-url": d(
      z.string().check(z.minLength(1)),
      "init --index-url: a PyPI mirror (http or https, no credentials).",
    ),
    wheelhouse: d(
      z.string().check(z.minLength(1)),
      "init --wheelhouse: a directory of wheels in the project (offline build).",
    ),
  }),
);
process.stdout.write(
  JSON.stringify(z.toJSONSchema(Settings, { io: "input", unrepresentable: "throw" }), null, 2) + "\n",
);
