/**
 * gpuprep as a library (docs/library.md): the Facts snapshot, the knowledge base, and each
 * command's core without its command line: diagnose (doctor), makePlan and generateFiles (init),
 * scanPaths (scan), estimateMemory (memory), runFleet (fleet).
 */
export * from "./facts/schema.js";
export { parseFacts, readFactsFile, writeFactsFile } from "./facts/io.js";
export { KnowledgeBase, loadKnowledgeBase } from "./kb/index.js";
export * from "./kb/compat.js";
export type { Finding, Rule, Severity, Evidence, Fix } from "./findings/types.js";
export { UserError } from "./errors.js";
// doctor's core: every registered rule over one snapshot, one finding per root cause.
export { diagnose, summarize, type FindingSummary } from "./diagnose/diagnose.js";
export { gatherFacts, type GatherOptions } from "./gather/index.js";
// init's core: the plan for a project on a machine, and the files written from it.
export { makePlan } from "./plan/index.js";
export type { Plan, InitOptions, TargetMachine, Decision, Strategy } from "./plan/index.js";
export type { ContainerPlan, NativePlan } from "./plan/types.js";
export { DEFAULT_INIT_OPTIONS } from "./plan/default-options.js";
export { targetFromFacts, targetFromName, type NamedTarget } from "./plan/target.js";
export { readProject } from "./gather/project.js";
export { generateFiles, type CurrentManifests, type GeneratedFile } from "./generate/index.js";
// scan's core: files, wheels, images, a lock or an index's pick, judged for one GPU.
export { scanPaths, type ScanOptions, type ScanRequest, type ScanOutcome } from "./scan/scan.js";
export { deviceFromFlag, targetFromName as scanTargetFromName } from "./scan/device.js";
export { classifyInput, type ScanInput, type ScanTarget } from "./remote/scan-inputs.js";
export type {
  ScanDevice,
  LibraryReport,
  PackageReport,
  SourceReport,
  ScanFinding,
} from "./remote/scan-result.js";
export { estimateMemory, largestFitting, DEFAULT_SEARCH } from "./memory/estimate.js";
export { deviceBudget, targetFromKb, type BudgetTarget } from "./memory/budget.js";
export { localTransport } from "./transports/local.js";
export type { Transport } from "./transports/types.js";
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
