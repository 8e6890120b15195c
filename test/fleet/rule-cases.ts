/**
 * The fleet rules' cases, as test/doctor/rule-cases.ts holds doctor's: on each named fleet
 * (scenarios.ts), which fleet rules must fire with which severity, and which must stay silent.
 * test/fleet/rules-on-fleets.test.ts runs them; src/fleet/rules/registry.test.ts checks that every
 * registered fleet rule has a firing and a silent case.
 */
import type { Severity } from "../../src/findings/types.js";

export interface FleetRow {
  scenario: string;
  fires: Record<string, Severity>;
  silent: string[];
}

const DRIFT = [
  "fleet-torch-drift",
  "fleet-driver-drift",
  "fleet-gpu-mix",
  "fleet-visible-devices-drift",
  "fleet-gfd-label-mismatch",
  "fleet-cuda-driver-drift",
  "fleet-nccl-drift",
  "fleet-python-drift",
  "fleet-numpy-drift",
  "fleet-extension-drift",
  "fleet-binary-coverage-drift",
  "fleet-cpu-arch-mix",
  "fleet-package-drift",
];
const STATES = [
  "fleet-node-down",
  "fleet-node-unreachable",
  "fleet-node-hung",
  "fleet-node-failed",
  "fleet-node-garbage",
  "fleet-nothing-checked",
];
const HEALTH = [
  "fleet-gpu-health-drift",
  "fleet-gpu-xid",
  "fleet-gpu-ecc-uncorrectable",
  "fleet-gpu-row-remap",
  "fleet-gpu-retired-pages",
  "fleet-gpu-throttled",
  "fleet-gpu-nvlink-errors",
  "fleet-gpu-fabric",
  "fleet-gpu-dcgm-health",
];
const RUN = ["fleet-allreduce", "fleet-node-diagnosis-failed", "fleet-validate-failed"];

export const FLEET_ROWS: FleetRow[] = [
  { scenario: "healthy", fires: {}, silent: [...DRIFT, ...STATES, ...HEALTH, ...RUN] },
  { scenario: "healthy-with-gpu-health", fires: {}, silent: HEALTH },
  {
    scenario: "driver-550",
    fires: { "fleet-driver-drift": "error", "fleet-cuda-driver-drift": "info" },
    silent: ["fleet-torch-drift", "fleet-gpu-mix"],
  },
  {
    scenario: "torch-2.10-nccl",
    fires: { "fleet-torch-drift": "error", "fleet-nccl-drift": "warning" },
    silent: ["fleet-driver-drift", "fleet-package-drift"],
  },
  { scenario: "pascal", fires: { "fleet-gpu-mix": "error" }, silent: ["fleet-torch-drift"] },
  {
    scenario: "visible-devices-empty",
    fires: { "fleet-visible-devices-drift": "error" },
    silent: ["fleet-gpu-mix"],
  },
  {
    scenario: "python-numpy-cpu",
    fires: {
      "fleet-python-drift": "warning",
      "fleet-numpy-drift": "warning",
      "fleet-cpu-arch-mix": "warning",
    },
    silent: ["fleet-torch-drift", "fleet-package-drift"],
  },
  {
    scenario: "extension-and-binaries",
    fires: { "fleet-extension-drift": "warning", "fleet-binary-coverage-drift": "warning" },
    silent: ["fleet-torch-drift", "fleet-python-drift"],
  },
  {
    scenario: "packages-differ",
    fires: { "fleet-package-drift": "warning" },
    silent: ["fleet-torch-drift", "fleet-extension-drift"],
  },
  { scenario: "packages-differ-ignored", fires: {}, silent: ["fleet-package-drift"] },
  { scenario: "gfd-labels", fires: { "fleet-gfd-label-mismatch": "warning" }, silent: ["fleet-gpu-mix"] },
  {
    scenario: "node-states",
    fires: {
      "fleet-node-down": "warning",
      "fleet-node-unreachable": "error",
      "fleet-node-hung": "error",
      "fleet-node-failed": "error",
      "fleet-node-garbage": "error",
    },
    silent: ["fleet-nothing-checked", "fleet-torch-drift"],
  },
  {
    scenario: "all-down",
    fires: { "fleet-node-down": "warning", "fleet-nothing-checked": "error" },
    silent: ["fleet-node-hung"],
  },
  {
    scenario: "gpu-health-sick",
    fires: {
      "fleet-gpu-health-drift": "warning",
      "fleet-gpu-xid": "error",
      "fleet-gpu-ecc-uncorrectable": "error",
      "fleet-gpu-row-remap": "warning",
      "fleet-gpu-throttled": "warning",
      "fleet-gpu-nvlink-errors": "warning",
      "fleet-gpu-fabric": "error",
    },
    silent: ["fleet-gpu-retired-pages", "fleet-gpu-dcgm-health", "fleet-torch-drift"],
  },
  {
    scenario: "gpu-health-pages-dcgm",
    fires: {
      "fleet-gpu-retired-pages": "warning",
      "fleet-gpu-dcgm-health": "error",
      "fleet-gpu-ecc-uncorrectable": "info",
    },
    silent: ["fleet-gpu-row-remap", "fleet-gpu-xid"],
  },
  { scenario: "allreduce-ran", fires: { "fleet-allreduce": "info" }, silent: ["fleet-validate-failed"] },
  { scenario: "allreduce-not-run", fires: { "fleet-allreduce": "error" }, silent: [] },
  { scenario: "diagnosis-throws", fires: { "fleet-node-diagnosis-failed": "error" }, silent: [] },
  {
    scenario: "validate-failed",
    fires: { "fleet-validate-failed": "error" },
    silent: ["fleet-node-diagnosis-failed"],
  },
];
