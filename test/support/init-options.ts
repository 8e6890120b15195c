/** The planner's options as `gpuprep init` has them with no flags, for tests that call makePlan directly. */
import type { InitOptions } from "../../src/plan/types.js";

/** Every flag at its default (strategy auto), with the overrides a test names; a fresh object each call. */
export function initOptions(overrides: Partial<InitOptions> = {}): InitOptions {
  return {
    strategy: "auto",
    jupyter: false,
    nonRoot: false,
    volumes: [],
    buildFromSource: [],
    wheelhouse: null,
    indexUrl: null,
    shmSize: null,
    python: null,
    ...overrides,
  };
}
