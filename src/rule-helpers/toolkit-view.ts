/** How the CUDA toolkit fact reads in messages. */
import type { ToolkitFacts } from "../facts/schema.js";

const HOW: Record<NonNullable<ToolkitFacts["source"]>, string> = {
  CUDA_HOME: "from CUDA_HOME",
  CUDA_PATH: "from CUDA_PATH",
  "nvcc-on-path": "the nvcc on PATH",
  default: "/usr/local/cuda, the default",
};

/** "/usr/local/cuda-12.4, from CUDA_HOME" */
export function describeToolkit(toolkit: ToolkitFacts): string {
  return `${toolkit.home ?? "none"}, ${toolkit.source ? HOW[toolkit.source] : "not found"}`;
}
