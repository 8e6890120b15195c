/**
 * A compile / JIT cache directory this process cannot create or write: Triton's kernel cache,
 * Inductor's cache, the CUDA driver's PTX JIT cache. Under `docker --user` or a random UID, HOME is
 * "/" or root's, and the first torch.compile or Triton kernel dies with PermissionError (F45); a
 * shared /tmp directory made by another user does the same (F69).
 *
 * The probe asks the kernel (os.access) as the process itself, so root is judged as root: it can
 * write anywhere but on a read-only mount, and a file standing where the directory should be
 * (TRITON_CACHE_DIR=/etc/passwd/x) stops everyone.
 */
import type { CacheDir } from "../facts/schema.js";
import type { Rule } from "../findings/types.js";
import { ev, makeFinding } from "../findings/finding.js";

/** What fails first when each cache cannot be written. */
const WHAT: Record<CacheDir["name"], string> = {
  triton:
    "Triton kernels (torch.compile, Triton-based extensions) cannot be cached: PermissionError on the first compile",
  inductor: "torch.compile (Inductor) fails with PermissionError when it creates its cache",
  "cuda-jit":
    "the driver cannot keep PTX it compiles for this GPU: every start compiles again (minutes for PTX-only code)",
};

/** A per-user directory under $TMPDIR (or /tmp) that the variable can point at. */
const WRITABLE: Record<CacheDir["name"], string> = {
  triton: '"${TMPDIR:-/tmp}/triton-cache-$(id -u)"',
  inductor: '"${TMPDIR:-/tmp}/torchinductor-$(id -u)"',
  "cuda-jit": '"${TMPDIR:-/tmp}/nv-compute-cache-$(id -u)"',
};

const NAME: Record<CacheDir["name"], string> = {
  triton: "Triton's kernel cache",
  inductor: "Inductor's cache",
  "cuda-jit": "The CUDA JIT cache",
};

function why(entry: CacheDir, user: string): string {
  if (entry.checked === null) return "no part of the path exists";
  if (entry.exists) return `the directory exists; ${user} cannot write it`;
  return `it does not exist and cannot be created: ${entry.checked} is not a directory ${user} can write`;
}

export const jitCacheUnwritable: Rule = {
  id: "jit-cache-unwritable",
  title: "A compile/JIT cache directory cannot be written",
  severity: "error",
  check(facts) {
    const caches = facts.python.cacheDirs;
    if (!caches) return [];
    const blocked = caches.entries.filter((e) => e.path !== null && e.writable === false);
    if (blocked.length === 0) return [];
    const user = caches.uid === null ? "this user" : caches.uid === 0 ? "root" : `uid ${caches.uid}`;
    const home = facts.python.env["HOME"];
    return [
      makeFinding(this, {
        message:
          `${blocked.map((e) => `${NAME[e.name]} ${e.path} (${e.fromVariable ? `from ${e.variable}` : `the default; ${e.variable} is unset`})`).join("; ")} ` +
          `cannot be written by ${user}: ${blocked.map((e) => WHAT[e.name]).join("; ")}.`,
        evidence: [
          ...blocked.map((e) => ev(e.variable, `${e.path}: ${why(e, user)}`)),
          ev("process", `${user}${home !== undefined ? `, HOME=${home}` : ""}`),
        ],
        fix: {
          summary: `Point ${blocked.map((e) => e.variable).join(", ")} at a directory ${user} can write (or give the process a HOME it owns).`,
          commands: blocked.map((e) => `export ${e.variable}=${WRITABLE[e.name]}`),
        },
      }),
    ];
  },
};
