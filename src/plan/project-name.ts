/**
 * The project's name as the generated files spell it (headers, image name, devcontainer name).
 * A pyproject name must already be a PEP 508 name (uv and pip refuse anything else), so a name
 * outside it is refused rather than guessed at. A requirements-only project is named after its
 * directory, which may hold anything a file system allows (spaces, newlines): that name is
 * normalized to PEP 508 characters instead, since the user never chose it as a package name.
 */
import { UserError } from "../errors.js";
import { quotedForMessage } from "../util/single-line.js";

/** PEP 508's name grammar (case-insensitive), anchored. */
const PEP508_NAME = /^([A-Za-z0-9]|[A-Za-z0-9][A-Za-z0-9._-]*[A-Za-z0-9])$/;

export function isPep508Name(text: string): boolean {
  return PEP508_NAME.test(text);
}

/** "my project\n" -> "my-project"; "" or nothing usable -> "project". */
function normalizedDirectoryName(dirName: string): string {
  const slug = dirName.replace(/[^A-Za-z0-9._-]+/g, "-").replace(/^[^A-Za-z0-9]+|[^A-Za-z0-9]+$/g, "");
  return slug || "project";
}

/**
 * @param pyprojectName [project].name when the project has one.
 * @returns the name, and a note when a directory name had to be changed.
 */
export function projectName(
  pyprojectName: string | null | undefined,
  dirName: string,
): { name: string; note: string | null } {
  if (typeof pyprojectName === "string") {
    if (!isPep508Name(pyprojectName))
      throw new UserError(
        `pyproject.toml: [project] name ${quotedForMessage(pyprojectName)} is not a valid package name (PEP 508)`,
        "use letters, digits, '.', '_' and '-', starting and ending with a letter or digit",
      );
    return { name: pyprojectName, note: null };
  }
  const name = normalizedDirectoryName(dirName);
  return {
    name,
    note:
      name === dirName
        ? null
        : `the project is named after its directory, ${quotedForMessage(dirName)}, which is not a package name: the generated files call it ${name}`,
  };
}
