/** The planner's options for tests that call makePlan directly. */
import { DEFAULT_INIT_OPTIONS } from "../../src/plan/default-options.js";
import type { InitOptions } from "../../src/plan/types.js";

/**
 * init's defaults (src/plan/default-options.ts) with the overrides a test names; a fresh object
 * with fresh lists each call. One difference: the app runs as root (nonRoot false, init --root),
 * the setting the tests' expected plans and files were written with.
 */
export function initOptions(overrides: Partial<InitOptions> = {}): InitOptions {
  return { ...DEFAULT_INIT_OPTIONS, nonRoot: false, volumes: [], buildFromSource: [], ...overrides };
}
