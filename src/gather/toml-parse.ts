/**
 * TOML text parsed for the manifest readers (pyproject.toml, pixi.toml). smol-toml's error message
 * is several lines with a code frame; a bad manifest gets one line naming the file and line instead.
 */
import { basename } from "node:path";
import { parse as parseToml, TomlError } from "smol-toml";
import { UserError } from "../errors.js";

export function parseTomlManifest(text: string, path: string): Record<string, unknown> {
  try {
    return parseToml(text);
  } catch (error) {
    if (error instanceof TomlError) {
      const reason = error.message.split("\n")[0]?.replace(/^Invalid TOML document: /, "") ?? "invalid TOML";
      throw new UserError(
        `${path}:${error.line}: invalid TOML: ${reason}`,
        `fix line ${error.line} of ${basename(path)}`,
      );
    }
    throw error;
  }
}
