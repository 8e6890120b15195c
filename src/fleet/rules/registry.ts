/**
 * Every fleet rule, as doctor's src/rules/registry.ts lists doctor's: fleet rules (read every
 * node at once: drift, node states, the all-reduce) and node rules (one node's facts, beside
 * doctor's rules: GPU health, the node's own run). Each has a page docs/rules/<id>.md and a firing
 * and a silent case in test/fleet/rule-cases.ts (src/fleet/rules/registry.test.ts checks both).
 * Kept apart from doctor's RULES: their inputs differ (a fleet, or facts plus the run), and
 * joining them would run fleet rules in every `gpuprep doctor`.
 */
import type { FleetNodeRule, FleetRule, FleetWideRule } from "../rule-kit.js";
import { allreduce } from "./allreduce.js";
import { driverDrift } from "./driver-drift.js";
import {
  binaryCoverageDrift,
  cpuArchMix,
  cudaDriverDrift,
  extensionDrift,
  ncclDrift,
  numpyDrift,
  pythonDrift,
} from "./field-drift.js";
import { gfdLabelMismatch } from "./gfd-label-mismatch.js";
import {
  gpuDcgmHealth,
  gpuEccUncorrectable,
  gpuFabric,
  gpuNvlinkErrors,
  gpuRetiredPages,
  gpuRowRemap,
  gpuThrottled,
  gpuXid,
} from "./gpu-health.js";
import { gpuHealthDrift } from "./gpu-health-drift.js";
import { gpuMix } from "./gpu-mix.js";
import { nodeDiagnosisFailed, validateFailed } from "./node-diagnosis.js";
import {
  nodeDown,
  nodeFailed,
  nodeGarbage,
  nodeHung,
  nodeUnreachable,
  nothingChecked,
} from "./node-states.js";
import { packageDrift } from "./package-drift.js";
import { torchDrift } from "./torch-drift.js";
import { visibleDevicesDrift } from "./visible-devices-drift.js";

export const FLEET_RULES: readonly FleetRule[] = [
  nodeDown,
  nodeUnreachable,
  nodeHung,
  nodeFailed,
  nodeGarbage,
  nothingChecked,
  torchDrift,
  driverDrift,
  gpuMix,
  visibleDevicesDrift,
  gfdLabelMismatch,
  cudaDriverDrift,
  ncclDrift,
  pythonDrift,
  numpyDrift,
  extensionDrift,
  binaryCoverageDrift,
  cpuArchMix,
  packageDrift,
  gpuHealthDrift,
  allreduce,
  nodeDiagnosisFailed,
  validateFailed,
  gpuXid,
  gpuEccUncorrectable,
  gpuRowRemap,
  gpuRetiredPages,
  gpuThrottled,
  gpuNvlinkErrors,
  gpuFabric,
  gpuDcgmHealth,
];

export const FLEET_WIDE_RULES = FLEET_RULES.filter((r): r is FleetWideRule => r.scope === "fleet");
export const FLEET_NODE_RULES = FLEET_RULES.filter((r): r is FleetNodeRule => r.scope === "node");
