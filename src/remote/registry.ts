/**
 * An image in a registry read through the OCI distribution API
 * (https://github.com/opencontainers/distribution-spec, spec.md "Pull"): the manifest (an index
 * resolved to the machine's linux/ARCH), then each layer blob streamed and scanned. A registry
 * that answers 401 with `WWW-Authenticate: Bearer realm=...` is asked for an anonymous token
 * (https://distribution.github.io/distribution/spec/auth/token/); no credentials are read or
 * sent, so private images are out of reach (save them with `docker save` and scan the tar).
 * Manifests and blobs are checked against their sha256 digests. Loopback registries are spoken
 * to over http (as Docker does for 127.0.0.0/8), every other over https.
 */
import { createHash } from "node:crypto";
import { UserError } from "../errors.js";
import { printablePrefix } from "../util/safe-read.js";
import { FetchError, showUrl, statusError, type HttpClient } from "./http.js";
import { MEDIA, ImageDocumentError, parseImageDocument, pickPlatform, type ImageDocument } from "./oci.js";
import type { ImageLayer, ImageSource } from "./image.js";
import type { CpuArch } from "./wheel-tags.js";
import { parseBoundedJson } from "./json.js";

export interface ImageReference {
  registry: string;
  repository: string;
  /** A tag or a sha256:... digest. */
  reference: string;
}

const ACCEPT = [MEDIA.ociIndex, MEDIA.ociManifest, MEDIA.dockerList, MEDIA.dockerManifest].join(", ");
const MAX_MANIFEST = 4 * 1024 * 1024;
const MAX_TOKEN = 1024 * 1024;

/** "docker://host:5000/team/image:tag" (or @sha256:...); Docker Hub names get library/ and its host. */
export function parseImageReference(text: string): ImageReference {
  const bad = () =>
    new UserError(
      `"${printablePrefix(text, 80)}" is not an image reference`,
      "write docker://REGISTRY/NAME:TAG, for example docker://127.0.0.1:5000/team/app:v1",
    );
  const rest = text.replace(/^docker:\/\//, "");
  const match = /^([^@]+?)(?::([\w][\w.-]{0,127}))?(?:@(sha256:[0-9a-f]{64}))?$/.exec(rest);
  if (!match) throw bad();
  const path = match[1] as string;
  const parts = path.split("/");
  const first = parts[0] as string;
  const hasRegistry =
    parts.length > 1 && (first.includes(".") || first.includes(":") || first === "localhost");
  const registry = hasRegistry ? first : "registry-1.docker.io";
  let repository = (hasRegistry ? parts.slice(1) : parts).join("/");
  if (!hasRegistry && !repository.includes("/")) repository = `library/${repository}`;
  if (!/^[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*(?:\/[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*)*$/.test(repository))
    throw bad();
  return { registry, repository, reference: match[3] ?? match[2] ?? "latest" };
}

function isLoopback(registry: string): boolean {
  const host = registry.replace(/:\d+$/, "").replace(/^\[|\]$/g, "");
  return host === "localhost" || host === "::1" || /^127\.\d+\.\d+\.\d+$/.test(host);
}

/** The parameters of `Bearer realm="...",service="...",scope="..."`. */
export function parseChallenge(header: string): Record<string, string> | null {
  const match = /^\s*Bearer\s+(.*)$/i.exec(header);
  if (!match) return null;
  const params: Record<string, string> = {};
  for (const part of (match[1] as string).matchAll(/([a-zA-Z]+)="([^"]*)"/g))
    params[(part[1] as string).toLowerCase()] = part[2] as string;
  return params["realm"] ? params : null;
}

class RegistrySession {
  private token: string | null = null;
  readonly base: string;

  constructor(
    private readonly client: HttpClient,
    readonly image: ImageReference,
  ) {
    this.base = `${isLoopback(image.registry) ? "http" : "https"}://${image.registry}/v2/${image.repository}`;
  }

  private headers(extra: Record<string, string>): Record<string, string> {
    return this.token ? { ...extra, authorization: `Bearer ${this.token}` } : extra;
  }

  /** An anonymous pull token from the realm the 401 named. */
  private async authenticate(challenge: string | string[] | undefined): Promise<void> {
    const params = typeof challenge === "string" ? parseChallenge(challenge) : null;
    if (!params)
      throw new FetchError(
        `${this.image.registry} wants credentials`,
        "gpuprep reads public images only; `docker save` the image and scan the tar",
      );
    const realm = new URL(params["realm"] as string);
    if (params["service"]) realm.searchParams.set("service", params["service"]);
    realm.searchParams.set("scope", params["scope"] ?? `repository:${this.image.repository}:pull`);
    const response = await this.client.fetchBytes(realm.toString(), { maxBytes: MAX_TOKEN });
    if (response.status !== 200)
      throw statusError(realm.toString(), response.status, "an anonymous pull token");
    let token: unknown;
    try {
      const body = parseBoundedJson(response.body.toString("utf8"), MAX_TOKEN) as Record<string, unknown>;
      token = body["token"] ?? body["access_token"];
    } catch {
      token = null;
    }
    if (typeof token !== "string" || token === "" || token.length > 64 * 1024 || /\s/.test(token))
      throw new FetchError(`${showUrl(realm.toString())}: no token in its answer`, null);
    this.token = token;
  }

  /** A GET that authenticates once on 401. */
  async get(url: string, headers: Record<string, string>, maxBytes?: number) {
    for (let attempt = 0; ; attempt++) {
      const response = await this.client.open(url, {
        headers: this.headers(headers),
        ...(maxBytes ? { maxBytes } : {}),
      });
      if (response.status === 401 && attempt === 0) {
        response.close();
        await this.authenticate(response.headers["www-authenticate"]);
        continue;
      }
      return response;
    }
  }

  async manifest(reference: string): Promise<{ document: ImageDocument; digest: string }> {
    const url = `${this.base}/manifests/${reference}`;
    const response = await this.get(url, { accept: ACCEPT }, MAX_MANIFEST);
    if (response.status !== 200) {
      response.close();
      throw statusError(url, response.status, "the image manifest");
    }
    const parts: Buffer[] = [];
    for await (const chunk of response.body) parts.push(chunk);
    const body = Buffer.concat(parts);
    const digest = `sha256:${createHash("sha256").update(body).digest("hex")}`;
    if (reference.startsWith("sha256:") && digest !== reference)
      throw new FetchError(
        `${showUrl(url)}: the manifest does not hash to the digest asked for`,
        "the registry served other bytes",
      );
    // The digest the registry files the manifest under (what `docker pull` records); a registry
    // that names another one served bytes other than those it stores under the tag.
    const named = response.headers["docker-content-digest"];
    if (typeof named === "string" && named !== "" && named !== digest)
      throw new FetchError(
        `${showUrl(url)}: the manifest does not hash to the Docker-Content-Digest the registry names`,
        "the registry served other bytes",
      );
    const type =
      String(response.headers["content-type"] ?? "")
        .split(";")[0]
        ?.trim() ?? null;
    try {
      return { document: parseImageDocument(body.toString("utf8"), type), digest };
    } catch (error) {
      if (error instanceof ImageDocumentError)
        throw new FetchError(`${showUrl(url)}: ${error.message}`, null);
      throw error;
    }
  }

  blob(digest: string, size: number): ImageLayer {
    const url = `${this.base}/blobs/${digest}`;
    return {
      digest,
      size,
      open: () => this.blobStream(url, size),
    };
  }

  private async *blobStream(url: string, size: number): AsyncGenerator<Buffer> {
    const response = await this.get(url, {}, size);
    if (response.status !== 200) {
      response.close();
      throw statusError(url, response.status, "a layer");
    }
    yield* response.body;
  }
}

/** The image a reference names, for the machine's architecture, as layers to stream. */
export async function openRegistryImage(
  text: string,
  client: HttpClient,
  arch: CpuArch,
): Promise<ImageSource> {
  const image = parseImageReference(text);
  const session = new RegistrySession(client, image);
  const start = client.bytesReceived;
  let { document } = await session.manifest(image.reference);
  for (let depth = 0; document.kind === "index"; depth++) {
    if (depth > 4) throw new FetchError(`${text}: indexes nested more than 4 deep`, null);
    let chosen;
    try {
      chosen = pickPlatform(document.manifests, arch);
    } catch (error) {
      throw new UserError(
        `${text}: ${(error as Error).message}`,
        "name the image for this architecture, or scan for another --target",
      );
    }
    ({ document } = await session.manifest(chosen.digest));
  }
  return {
    ref: text,
    kind: "registry",
    layers: document.layers.map((layer) => session.blob(layer.digest, layer.size)),
    bytesFetched: () => client.bytesReceived - start,
    close: async () => {},
  };
}

/**
 * The digest a tag names now: the hash of its top-level manifest (an index for a multi-platform
 * image), the one `docker buildx imagetools inspect` prints and a `FROM ref@digest` pulls. A tag
 * can be pushed again; this digest cannot change.
 */
export async function readTagDigest(text: string, client: HttpClient): Promise<string> {
  const image = parseImageReference(text);
  if (image.reference.startsWith("sha256:")) return image.reference;
  const { digest } = await new RegistrySession(client, image).manifest(image.reference);
  return digest;
}
