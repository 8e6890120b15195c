/**
 * The doctor's door to the gather layer. Until src/gather lands in this build, live gathering
 * answers with a clear error and `--from` still works.
 */
import { UserError } from "../errors.js";
import type { Facts } from "../facts/schema.js";

export interface DoctorGatherOptions {
  python?: string;
  container?: string;
  image?: string;
  ssh?: string;
  projectDir?: string | null;
  fast?: boolean;
  timeoutMs?: number;
}

export async function gatherForDoctor(options: DoctorGatherOptions): Promise<Facts> {
  // A computed specifier: the gather module is optional in this build.
  const specifier = "../gather/index.js";
  let module: { gatherFacts?: (o: DoctorGatherOptions) => Promise<Facts> };
  try {
    module = (await import(specifier)) as typeof module;
  } catch (error) {
    // Only "the module is not in this build" means unavailable; any other failure is a real bug.
    if ((error as { code?: string }).code !== "ERR_MODULE_NOT_FOUND") throw error;
    module = {};
  }
  if (!module.gatherFacts) {
    throw new UserError(
      "this build of gpuprep cannot gather facts yet",
      "diagnose a saved snapshot with `gpuprep doctor --from FILE`",
    );
  }
  return module.gatherFacts(options);
}
