/** torch installed in more than one sys.path location, or imported from elsewhere than its metadata says. */
import { dirname } from "node:path";
import type { Rule } from "../findings/types.js";
import { ev, makeFinding } from "../findings/finding.js";
import { torchLive } from "../rule-helpers/view.js";

export const torchInstalledTwice: Rule = {
  id: "torch-installed-twice",
  title: "torch is installed twice or shadowed",
  severity: "error",
  check(facts) {
    const python = facts.python.interpreter.executable;
    const duplicate = facts.python.duplicates.find((d) => d.normalizedName === "torch");
    if (duplicate) {
      const entries = [...duplicate.entries].sort((a, b) => a.pathIndex - b.pathIndex);
      const winner = entries[0];
      const losers = entries.slice(1);
      // Two copies of one version import the same code; still a trap for the next pip install.
      const sameVersion = new Set(entries.map((e) => e.version)).size === 1;
      return [
        makeFinding(this, {
          severity: sameVersion ? "warning" : "error",
          message:
            `torch is installed ${entries.length} times; Python imports ${winner?.version} from ${winner?.location} ` +
            `and ignores ${losers.map((e) => `${e.version} in ${e.location}`).join(", ")}. pip and the import disagree about which torch you have.`,
          evidence: entries.map((e) => ev(`torch ${e.version}`, `${e.location} (sys.path[${e.pathIndex}])`)),
          fix: {
            summary:
              "Keep one torch: uninstall the copy you do not want (repeat until pip finds none), then reinstall the right one once.",
            commands: [
              ...entries.map(
                (e) => `${python} -m pip uninstall -y torch   # removes ${e.version} from ${e.location}`,
              ),
              `${python} -m pip install torch   # with the --index-url of the CUDA build you want`,
            ],
          },
        }),
      ];
    }
    const torch = facts.python.torch;
    const live = torchLive(facts);
    if (torch && live && !dirname(live.file).startsWith(torch.location)) {
      return [
        makeFinding(this, {
          message: `The torch metadata says ${torch.version} in ${torch.location}, but import torch loads ${live.version} from ${dirname(live.file)}: something earlier on sys.path (PYTHONPATH, a .pth file, the current directory) shadows it.`,
          evidence: [
            ev("torch (metadata)", `${torch.version} in ${torch.location}`),
            ev("torch.__file__", live.file),
            ev("PYTHONPATH", facts.python.env.PYTHONPATH ?? "(unset)"),
          ],
          fix: {
            summary:
              "Remove the shadowing directory from sys.path (unset PYTHONPATH, delete the stray torch folder or .pth entry).",
            commands: ["unset PYTHONPATH", `${python} -c "import torch; print(torch.__file__)"`],
          },
        }),
      ];
    }
    return [];
  },
};
