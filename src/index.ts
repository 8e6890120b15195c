/** gpuprep as a library: the Facts snapshot, the knowledge base and the compatibility rules. */
export * from "./facts/schema.js";
export { parseFacts, readFactsFile, writeFactsFile } from "./facts/io.js";
export { KnowledgeBase, loadKnowledgeBase } from "./kb/index.js";
export * from "./kb/compat.js";
export type { Finding, Rule, Severity, Evidence, Fix } from "./rule-helpers/types.js";
export { UserError } from "./errors.js";
export { estimateMemory, largestFitting, DEFAULT_SEARCH } from "./memory/estimate.js";
export type { EstimateInput, BatchRequest } from "./memory/estimate.js";
export type { MemoryReport, MemoryAlternative, ScaledRuleResult } from "./memory/report-types.js";
export type {
  MemoryEstimate,
  MemoryBreakdown,
  MemoryVerdict,
  DeviceBudget,
  WorkSpec,
  ModelSource,
  LoraSpec,
} from "./memory/types.js";
// The fleet command's core: every node's facts through one carrier (Slurm, Kubernetes, ssh hosts,
// saved snapshots), merged into one report; the CLI only renders it.
export {
  runFleet,
  collectFleetJob,
  type FleetRunOptions,
  type FleetRun,
  type FleetCarrier,
} from "./fleet/run.js";
export type { FleetGatherOptions } from "./fleet/gather.js";
export { readBaseline, type Baseline } from "./fleet/baseline.js";
export { packagePolicy, type PackagePolicy } from "./fleet/packages.js";
export type {
  FleetReport,
  NodeResult,
  MergedFinding,
  FleetNodeSummary,
  NodeGroup,
  Fingerprint,
} from "./fleet/types.js";
