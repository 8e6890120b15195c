/** Findings about one node's run that are not doctor's: its diagnosis threw, or validate did not run. */
import { makeFinding } from "../../findings/finding.js";
import type { FleetNodeRule } from "../rule-kit.js";

export const nodeDiagnosisFailed: FleetNodeRule = {
  scope: "node",
  id: "fleet-node-diagnosis-failed",
  title: "The node's facts could not be diagnosed",
  severity: "error",
  check(input) {
    if (input.diagnosisError === null) return [];
    return [
      makeFinding(this, {
        message: `gpuprep failed on this node's facts: ${input.diagnosisError}`.slice(0, 300),
        evidence: [],
        fix: {
          summary: "Report it as a gpuprep bug with the node's snapshot (fleet --save DIR).",
          commands: [],
        },
      }),
    ];
  },
};

export const validateFailed: FleetNodeRule = {
  scope: "node",
  id: "fleet-validate-failed",
  title: "The validate payload did not run on this node",
  severity: "error",
  check(input) {
    if (input.validateFailure === null) return [];
    return [
      makeFinding(this, {
        message: input.validateFailure.slice(0, 300),
        evidence: [],
        fix: { summary: "Run `gpuprep validate` on the node by hand to see the full error.", commands: [] },
      }),
    ];
  },
};
