/**
 * The JSON documents of container images: OCI image index and manifest
 * (https://github.com/opencontainers/image-spec, index.md and manifest.md), Docker's manifest list
 * and image manifest v2 schema 2 (their registry equivalents), and `docker save`'s manifest.json.
 * Pure functions of the text, bounded (1,000 manifests or layers, sha256 digests only) and
 * fuzzed (bench/fuzz-remote.mjs).
 */
import type { CpuArch } from "./wheel-tags.js";
import { parseBoundedJson } from "./json.js";

export const MEDIA = {
  ociIndex: "application/vnd.oci.image.index.v1+json",
  ociManifest: "application/vnd.oci.image.manifest.v1+json",
  dockerList: "application/vnd.docker.distribution.manifest.list.v2+json",
  dockerManifest: "application/vnd.docker.distribution.manifest.v2+json",
} as const;

export interface Descriptor {
  mediaType: string;
  digest: string;
  size: number;
  platform: { os: string; architecture: string; variant: string | null } | null;
}

export type ImageDocument =
  | { kind: "index"; manifests: Descriptor[] }
  | { kind: "manifest"; config: Descriptor | null; layers: Descriptor[] };

interface DockerSaveImage {
  config: string;
  repoTags: string[];
  /** Paths inside the archive (legacy "ID/layer.tar", or "blobs/sha256/HEX"). */
  layers: string[];
}

const MAX_ITEMS = 1000;
const DIGEST = /^sha256:[0-9a-f]{64}$/;

export class ImageDocumentError extends Error {}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function parseJson(text: string): unknown {
  try {
    return parseBoundedJson(text, 4 * 1024 * 1024);
  } catch (error) {
    throw new ImageDocumentError((error as Error).message);
  }
}

function descriptor(value: unknown, where: string): Descriptor {
  if (!isObject(value)) throw new ImageDocumentError(`${where} is not an object`);
  const { mediaType, digest, size, platform } = value;
  if (typeof digest !== "string" || !DIGEST.test(digest))
    throw new ImageDocumentError(`${where}: digest is not sha256:<64 hex>`);
  if (typeof size !== "number" || !Number.isSafeInteger(size) || size < 0)
    throw new ImageDocumentError(`${where}: bad size`);
  let parsedPlatform: Descriptor["platform"] = null;
  if (
    isObject(platform) &&
    typeof platform["os"] === "string" &&
    typeof platform["architecture"] === "string"
  )
    parsedPlatform = {
      os: platform["os"],
      architecture: platform["architecture"],
      variant: typeof platform["variant"] === "string" ? platform["variant"] : null,
    };
  return {
    mediaType: typeof mediaType === "string" ? mediaType : "",
    digest,
    size,
    platform: parsedPlatform,
  };
}

function list(value: unknown, where: string): unknown[] {
  if (!Array.isArray(value)) throw new ImageDocumentError(`${where} is missing`);
  if (value.length > MAX_ITEMS) throw new ImageDocumentError(`${where}: more than ${MAX_ITEMS}`);
  return value;
}

/** An index (OCI index, Docker manifest list) or an image manifest (OCI, Docker v2 schema 2). */
export function parseImageDocument(text: string, contentType: string | null = null): ImageDocument {
  const json = parseJson(text);
  if (!isObject(json)) throw new ImageDocumentError("not a JSON object");
  if (json["schemaVersion"] !== 2)
    throw new ImageDocumentError(`schemaVersion ${String(json["schemaVersion"]).slice(0, 10)} is not 2`);
  const mediaType = (typeof json["mediaType"] === "string" ? json["mediaType"] : null) ?? contentType ?? "";
  if ("manifests" in json || mediaType === MEDIA.ociIndex || mediaType === MEDIA.dockerList)
    return {
      kind: "index",
      manifests: list(json["manifests"], "manifests").map((d, i) => descriptor(d, `manifests[${i}]`)),
    };
  return {
    kind: "manifest",
    config: json["config"] === undefined ? null : descriptor(json["config"], "config"),
    layers: list(json["layers"], "layers").map((d, i) => descriptor(d, `layers[${i}]`)),
  };
}

/** `docker save`'s manifest.json: one entry per image in the archive. */
export function parseDockerSaveManifest(text: string): DockerSaveImage[] {
  const json = parseJson(text);
  const images = list(json, "the manifest");
  return images.map((image, i) => {
    if (!isObject(image) || typeof image["Config"] !== "string")
      throw new ImageDocumentError(`manifest.json[${i}] has no Config`);
    const layers = list(image["Layers"], `manifest.json[${i}].Layers`);
    if (!layers.every((l): l is string => typeof l === "string" && l.length > 0 && l.length < 4096))
      throw new ImageDocumentError(`manifest.json[${i}].Layers is not a list of paths`);
    const tags = Array.isArray(image["RepoTags"])
      ? image["RepoTags"].filter((t): t is string => typeof t === "string")
      : [];
    return { config: image["Config"], repoTags: tags, layers };
  });
}

/** The OCI architecture name of a CPU. */
function ociArchitecture(arch: CpuArch): string {
  return arch === "aarch64" ? "arm64" : "amd64";
}

/** The manifest of an index for linux/ARCH; an error lists what the index has. */
export function pickPlatform(index: Descriptor[], arch: CpuArch): Descriptor {
  const wanted = ociArchitecture(arch);
  const match = index.find((d) => d.platform?.os === "linux" && d.platform.architecture === wanted);
  if (match) return match;
  const unlabelled = index.filter((d) => d.platform === null);
  if (unlabelled.length === 1) return unlabelled[0]!;
  const have = index
    .map((d) => (d.platform ? `${d.platform.os}/${d.platform.architecture}` : "?"))
    .join(", ");
  throw new ImageDocumentError(`no linux/${wanted} image in the index (it has ${have || "none"})`);
}
