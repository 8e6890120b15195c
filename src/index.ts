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
