/**
 * The layering of docs/DESIGN.md as data, the one source both checks read: test/layering.test.ts
 * (every import under src/, the child_process and spawn-helper rules) and ESLint's
 * `gpuprep/layers` rule (scripts/guards/eslint-layers.mjs, the same verdict in the editor). Gather
 * (through transports) is the only way out to the world, everything after it is a function of
 * Facts and the knowledge base, and nothing below the CLI imports from it.
 */
import { relative } from "node:path";

/** Which top-level folders of src/ each folder may import from (its own folder is always allowed). */
export const ALLOWED = {
  root: ["util"],
  util: ["root"],
  // Domain values parsed once (TorchVariant, CudaVersion, ...): below everything but util.
  vocabulary: ["util", "root"],
  facts: ["util", "root", "vocabulary"],
  fatbin: ["facts", "util", "root", "vocabulary"],
  kb: ["facts", "util", "root", "vocabulary"],
  transports: ["util", "root", "vocabulary"],
  // Judgments doctor's rules and validate's checks share (one verdict, id and message for one
  // condition): pure functions of plain inputs, below both, so neither imports the other.
  judge: ["kb", "util", "root", "vocabulary"],
  // Reading what is not installed: wheels and indexes over HTTP, lock files, container images
  // (docs/DESIGN.md); the network client lives here, beside the binary reader it feeds.
  remote: ["fatbin", "facts", "kb", "util", "root", "vocabulary"],
  // scan's core: files, wheels and images read and judged for one GPU, and that GPU named.
  scan: ["remote", "fatbin", "facts", "kb", "util", "root", "vocabulary"],
  gather: ["transports", "facts", "fatbin", "remote", "kb", "util", "root", "vocabulary"],
  // What a finding is (Finding, Evidence, Rule; Severity and Fix from judge's vocabulary) and its one
  // factory, makeFinding: for doctor's rules, fleet's rules and every renderer of findings.
  findings: ["judge", "facts", "kb", "vocabulary", "util", "root"],
  // What rules share (views over Facts, install advice); never a rule itself.
  "rule-helpers": ["findings", "project", "judge", "facts", "kb", "fatbin", "vocabulary", "util", "root"],
  rules: [
    "findings",
    "rule-helpers",
    "project",
    "judge",
    "facts",
    "kb",
    "fatbin",
    "vocabulary",
    "util",
    "root",
  ],
  // Runs the rules over Facts and merges findings of one root cause.
  diagnose: [
    "rules",
    "findings",
    "rule-helpers",
    "project",
    "judge",
    "facts",
    "kb",
    "vocabulary",
    "util",
    "root",
  ],
  // One reading of the project (its torch intent, routes, requirements, what each install would put
  // in place) for doctor's rules and init's plan alike.
  project: ["facts", "kb", "vocabulary", "util", "root"],
  plan: ["project", "facts", "kb", "vocabulary", "util", "root"],
  // A project's remembered flags ([tool.gpuprep], gpuprep.toml): read by the CLI, below everything but util.
  settings: ["util", "root"],
  generate: ["plan", "facts", "kb", "util", "root", "vocabulary"],
  // Commands that run payloads of their own do so through a transport, next to gather.
  validate: ["transports", "gather", "judge", "facts", "kb", "util", "root", "vocabulary"],
  memory: ["transports", "gather", "facts", "kb", "util", "root", "vocabulary"],
  // fleet validate's core (src/fleet/validate.ts) runs validate's payload and judge on every node.
  fleet: [
    "transports",
    "gather",
    "validate",
    "facts",
    "kb",
    "rules",
    "diagnose",
    "findings",
    "rule-helpers",
    "judge",
    "fatbin",
    "util",
    "root",
    "vocabulary",
    "project",
  ],
  report: [
    "facts",
    "kb",
    "rules",
    "diagnose",
    "findings",
    "rule-helpers",
    "judge",
    "plan",
    "generate",
    "validate",
    "memory",
    "fleet",
    "fatbin",
    "remote",
    "util",
    "root",
    "vocabulary",
    "project",
    "settings",
  ],
  cli: ["*"],
  // src/index.ts, the library's entry: anything below the CLI.
  library: [
    "root",
    "util",
    "facts",
    "fatbin",
    "remote",
    "scan",
    "kb",
    "transports",
    "gather",
    "rules",
    "diagnose",
    "findings",
    "rule-helpers",
    "judge",
    "plan",
    "generate",
    "validate",
    "memory",
    "fleet",
    "report",
    "vocabulary",
    "project",
  ],
};

/** Only transports start processes: nothing else imports node:child_process. */
export const CHILD_PROCESS_ALLOWED = ["transports"];

/**
 * The process starters of src/transports/spawn.ts. Gather may call them to ask a transport's
 * machine (it is the layer that touches the world); everything else goes through a Transport.
 */
export const SPAWN_HELPERS = ["runCommand", "runWithInput"];
export const SPAWN_HELPERS_ALLOWED = ["transports", "gather"];

/** The layer of a file under `srcDir` (its top folder; "root" for src/*.ts, "library" for src/index.ts). */
export function layerOf(srcDir, file) {
  const rel = relative(srcDir, file).replace(/\.js$/, ".ts");
  if (rel === "index.ts") return "library";
  return rel.includes("/") ? rel.split("/")[0] : "root";
}

/** Whether a file of layer `from` may import one of layer `to`. */
export function mayImport(from, to) {
  const allowed = ALLOWED[from];
  return from === to || (allowed !== undefined && (allowed.includes("*") || allowed.includes(to)));
}
