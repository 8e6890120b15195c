/** The options `gpuprep init` plans with when no flag is given, for library callers of makePlan. */
import type { InitOptions } from "./types.js";

/** Strategy chosen by the planner, no Jupyter, the app as the host user (as init without --root), no extras. */
export const DEFAULT_INIT_OPTIONS: Readonly<InitOptions> = Object.freeze({
  strategy: "auto",
  jupyter: false,
  nonRoot: true,
  volumes: [],
  buildFromSource: [],
  wheelhouse: null,
  indexUrl: null,
  shmSize: null,
  python: null,
});
