/** .devcontainer/devcontainer.json: the compose service, so editor and CLI use one container definition. */
import type { Plan } from "../plan/types.js";
import { WORKDIR } from "./paths.js";

export function renderDevcontainer(plan: Plan): string {
  const config: Record<string, unknown> = {
    name: `${plan.project.name} (${plan.target.gpuName})`,
    dockerComposeFile: ["../compose.yaml"],
    service: "app",
    workspaceFolder: WORKDIR,
    shutdownAction: "stopCompose",
    customizations: { vscode: { extensions: ["ms-python.python", "ms-toolsai.jupyter"] } },
  };
  if (plan.options.nonRoot) config["updateRemoteUserUID"] = true;
  return JSON.stringify(config, null, 2) + "\n";
}
