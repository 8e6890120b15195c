/**
 * `--volume HOST:CONTAINER[:ro|rw]`, parsed once: the CLI refuses what does not parse, and the
 * generators (compose.yaml, run-container.sh) read the parts from here, each quoting them for
 * its own syntax.
 */
import { UserError } from "../errors.js";
import { hasControlCharacters, quotedForMessage } from "../util/single-line.js";

interface VolumeFlag {
  host: string;
  container: string;
  readOnly: boolean;
}

const HINT =
  "e.g. --volume /data/imagenet:/datasets/imagenet:ro (HOST:CONTAINER[:ro|rw], CONTAINER absolute)";

export function parseVolumeFlag(spec: string): VolumeFlag {
  const bad = (why: string): never => {
    throw new UserError(`init: --volume ${quotedForMessage(spec)} ${why}`, HINT);
  };
  // A newline or NUL would end the line it is written on (compose.yaml, the run script).
  if (hasControlCharacters(spec)) bad("holds a control character (newline, NUL, ...)");
  const parts = spec.split(":");
  if (parts.length < 2 || parts.length > 3) bad("is not HOST:CONTAINER[:ro]");
  const [host = "", container = "", mode] = parts;
  if (!host) bad("has no host path");
  if (!container.startsWith("/")) bad("needs an absolute container path");
  if (container === "/") bad("would mount over the container's root");
  if (mode !== undefined && mode !== "ro" && mode !== "rw") bad(`has mode "${mode}", not ro or rw`);
  return { host, container, readOnly: mode === "ro" };
}
