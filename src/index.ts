/** gpuprep as a library: the Facts snapshot, the knowledge base and the compatibility rules. */
export * from "./facts/schema.js";
export { parseFacts, readFactsFile, writeFactsFile } from "./facts/io.js";
export { KnowledgeBase, loadKnowledgeBase } from "./kb/index.js";
export * from "./kb/compat.js";
export type { Finding, Rule, Severity, Evidence, Fix } from "./rule-helpers/types.js";
export { UserError } from "./errors.js";
