/**
 * Where a container plan's base image is pulled from, and how it is pinned. NGC images live on
 * nvcr.io; a site that cannot reach it keeps a mirror (a pull-through cache such as Harbor's
 * proxy projects, or a registry it copies to), named once with `--registry-mirror`. A tag can be
 * pushed again while a digest cannot change, so the Dockerfile pins FROM by the digest the
 * registry names for the tag when `init --fetch` asked it (issue 28 item 8), else by the knowledge
 * base's digest, else by tag with a comment saying how to pin.
 */
import type { ContainerPlan, Decision } from "./types.js";

/** The registry of every NGC image the knowledge base lists. */
const NGC_REGISTRY = "nvcr.io";

/** "harbor.corp/nvcr-proxy", "127.0.0.1:5000", "registry:5000": a registry host, a port, a path. */
const MIRROR =
  /^(?<host>[a-z0-9](?:[a-z0-9-]*[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]*[a-z0-9])?)*|\[[0-9a-f:]+\])(?<port>:\d{1,5})?(?:\/[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*)*$/;

/**
 * A `--registry-mirror` value, checked: null where it is not a registry host[:port][/path]. As
 * Docker reads a reference, the first part names a registry only with a dot, a port or as
 * localhost; "harbor/x" would be a Docker Hub repository.
 */
export function parseRegistryMirror(text: string): string | null {
  const mirror = text.trim().replace(/\/+$/, "");
  const groups = MIRROR.exec(mirror)?.groups;
  if (!groups) return null;
  const host = groups["host"] as string;
  const namesRegistry =
    host.includes(".") || host.startsWith("[") || groups["port"] !== undefined || host === "localhost";
  return namesRegistry ? mirror : null;
}

/** nvcr.io/nvidia/pytorch:25.11-py3 through harbor.corp/nvcr-proxy: harbor.corp/nvcr-proxy/nvidia/pytorch:25.11-py3. */
export function mirroredRef(ref: string, mirror: string): string {
  const path = ref.startsWith(`${NGC_REGISTRY}/`) ? ref.slice(NGC_REGISTRY.length + 1) : ref;
  return `${mirror}/${path}`;
}

/** The plan pulling its image through the mirror, with the decision that says so. */
export function throughMirror(plan: ContainerPlan, mirror: string): ContainerPlan {
  const original = plan.container.ref;
  const ref = mirroredRef(original, mirror);
  const decision: Decision = {
    topic: "base image registry",
    choice: ref,
    reason: `--registry-mirror ${mirror}: the image is pulled from the mirror, which must serve ${original} under the same path and tag; it is judged as ${original}`,
    sources: [],
  };
  return {
    ...plan,
    container: { ...plan.container, ref, mirrorOf: original },
    decisions: [...plan.decisions, decision],
  };
}

/** What `init --fetch` heard from the registry about the plan's tag. */
export type RegistryAnswer = { digest: string; askedOn: string } | { error: string };

/**
 * The plan with the digest the registry names for its tag (FROM pinned by it), or, where the
 * registry could not be asked, a decision that says why the tag stays the pin.
 */
export function pinnedByRegistry(plan: ContainerPlan, answer: RegistryAnswer): ContainerPlan {
  const ref = plan.container.ref;
  if ("error" in answer) {
    const decision: Decision = {
      topic: "base image digest",
      choice: "pinned by tag",
      reason: `init --fetch could not ask the registry for ${ref}'s digest (${answer.error}); the Dockerfile says how to pin it`,
      sources: [],
    };
    return { ...plan, decisions: [...plan.decisions, decision] };
  }
  const source = `the digest the registry named for ${ref} on ${answer.askedOn} (init --fetch)`;
  const decision: Decision = {
    topic: "base image digest",
    choice: answer.digest,
    reason: `FROM ${ref}@${answer.digest}: ${source}; a tag can be pushed again, a digest cannot change`,
    sources: [],
  };
  return {
    ...plan,
    container: { ...plan.container, digest: { value: answer.digest, source } },
    decisions: [...plan.decisions, decision],
  };
}
