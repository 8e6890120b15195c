/**
 * init pins the NGC base image by digest where the registry has it (issue 28 item 8): with --fetch
 * it asks the registry for the tag's digest and writes FROM ref@digest. The registry is Debian's
 * distribution registry 2.8 (`docker-registry serve`) on 127.0.0.1, standing in as a mirror of
 * nvcr.io (--registry-mirror): a two-platform OCI index is pushed to it through the distribution
 * API under the path and tag init plans, and the digest it must pin is the one the registry itself
 * answers the push with (Docker-Content-Digest). A registry that cannot be reached leaves the tag
 * pin, said in the plan; a registry that names another digest than its bytes hash to is refused.
 */
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { spawn, type ChildProcess } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runCliAsync as runCli } from "../remote/cli-async.js";
import { startServer } from "../support/http-server.js";
import { DOCKER_REGISTRY, requireParts, skipUnless } from "../support/needs.js";
import { readTagDigest } from "../../src/remote/registry.js";
import { HttpClient } from "../../src/remote/http.js";

const skip = skipUnless(DOCKER_REGISTRY);
const dir = mkdtempSync(join(tmpdir(), "gpuprep-init-digest-"));
let registry: ChildProcess | null = null;
let mirror = "";

async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const server = createServer().listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

async function waitForRegistry(base: string): Promise<void> {
  for (let attempt = 0; attempt < 100; attempt++) {
    try {
      if ((await fetch(`${base}/v2/`)).status === 200) return;
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  assert.fail(`docker-registry did not answer on ${base}/v2/`);
}

before(async () => {
  if (skip) return;
  requireParts(DOCKER_REGISTRY);
  const port = await freePort();
  const config = join(dir, "registry.yml");
  writeFileSync(
    config,
    `version: 0.1\nlog:\n  level: warn\nstorage:\n  filesystem:\n    rootdirectory: ${dir}/data\nhttp:\n  addr: 127.0.0.1:${port}\n`,
  );
  registry = spawn("docker-registry", ["serve", config], { stdio: "ignore" });
  mirror = `127.0.0.1:${port}`;
  await waitForRegistry(`http://${mirror}`);
});

after(() => {
  registry?.kill();
  rmSync(dir, { recursive: true, force: true });
});

const sha256 = (bytes: Buffer) => `sha256:${createHash("sha256").update(bytes).digest("hex")}`;

/** One blob through the distribution API's two-step upload (POST, then PUT with the digest). */
async function pushBlob(base: string, repository: string, bytes: Buffer): Promise<string> {
  const start = await fetch(`${base}/v2/${repository}/blobs/uploads/`, { method: "POST" });
  assert.equal(start.status, 202, `blob upload start: ${start.status}`);
  const location = new URL(start.headers.get("location")!, base);
  location.searchParams.set("digest", sha256(bytes));
  const put = await fetch(location, {
    method: "PUT",
    headers: { "content-type": "application/octet-stream" },
    body: new Uint8Array(bytes),
  });
  assert.equal(put.status, 201, `blob upload: ${put.status}`);
  return sha256(bytes);
}

/** A manifest PUT under a tag or digest; returns the digest the registry files it under. */
async function pushManifest(
  base: string,
  repository: string,
  reference: string,
  document: object,
  type: string,
) {
  const bytes = Buffer.from(JSON.stringify(document));
  const response = await fetch(`${base}/v2/${repository}/manifests/${reference}`, {
    method: "PUT",
    headers: { "content-type": type },
    body: new Uint8Array(bytes),
  });
  assert.equal(
    response.status,
    201,
    `manifest PUT ${reference}: ${response.status} ${await response.text()}`,
  );
  return { digest: response.headers.get("docker-content-digest")!, size: bytes.length };
}

/** An OCI index of two one-layer images (amd64, arm64) under `tag`; the registry's digest for it. */
async function pushIndex(repository: string, tag: string): Promise<string> {
  const base = `http://${mirror}`;
  const manifests = [];
  for (const architecture of ["amd64", "arm64"]) {
    const layer = await pushBlob(base, repository, Buffer.from(`layer for ${architecture}`));
    const configBytes = Buffer.from(
      JSON.stringify({ architecture, os: "linux", rootfs: { type: "layers", diff_ids: [] } }),
    );
    const config = await pushBlob(base, repository, configBytes);
    const manifest = {
      schemaVersion: 2,
      mediaType: "application/vnd.oci.image.manifest.v1+json",
      config: {
        mediaType: "application/vnd.oci.image.config.v1+json",
        digest: config,
        size: configBytes.length,
      },
      layers: [
        {
          mediaType: "application/vnd.oci.image.layer.v1.tar",
          digest: layer,
          size: `layer for ${architecture}`.length,
        },
      ],
    };
    const pushed = await pushManifest(
      base,
      repository,
      sha256(Buffer.from(JSON.stringify(manifest))),
      manifest,
      manifest.mediaType,
    );
    manifests.push({
      mediaType: manifest.mediaType,
      digest: pushed.digest,
      size: pushed.size,
      platform: { architecture, os: "linux" },
    });
  }
  const index = { schemaVersion: 2, mediaType: "application/vnd.oci.image.index.v1+json", manifests };
  return (await pushManifest(base, repository, tag, index, index.mediaType)).digest;
}

function project(name: string): string {
  const root = join(dir, name);
  mkdirSync(root, { recursive: true });
  writeFileSync(
    join(root, "pyproject.toml"),
    `[project]\nname = "${name}"\nversion = "0.1.0"\ndependencies = ["torch"]\n`,
  );
  return root;
}

interface InitJson {
  plan: {
    container: { ref: string; mirrorOf?: string; digest?: { value: string } };
    decisions: { topic: string; choice: string; reason: string }[];
  };
  files: { path: string; content: string }[];
}

async function init(root: string, ...flags: string[]) {
  const args = ["init", "--project", root, "--target", "h100", "--driver", "580", "--strategy", "container"];
  const result = await runCli([...args, "--dry-run", "--json", ...flags]);
  assert.equal(result.code, 0, result.stderr);
  const json = JSON.parse(result.stdout) as InitJson;
  const dockerfile = json.files.find((f) => f.path === "Dockerfile")!.content;
  const baseArg = /^ARG BASE_IMAGE=(.*)$/m.exec(dockerfile)?.[1];
  return {
    json,
    dockerfile,
    baseArg,
    decision: (topic: string) => json.plan.decisions.find((d) => d.topic === topic),
  };
}

test(
  "init --fetch through a registry mirror pins FROM by the digest the registry names for the tag",
  { skip },
  async () => {
    const root = project("digest-mirror");
    const planned = await init(root, "--registry-mirror", mirror);
    // Without --fetch: the mirror's reference, by tag, and nothing asked of the registry.
    const ref = planned.json.plan.container.ref;
    assert.match(ref, new RegExp(`^${mirror}/nvidia/pytorch:\\d{2}\\.\\d{2}-py3$`));
    assert.equal(planned.json.plan.container.mirrorOf, ref.replace(mirror, "nvcr.io"));
    assert.equal(planned.baseArg, ref);
    assert.match(planned.dockerfile, /# Pinned by tag/);
    assert.equal(planned.decision("base image digest"), undefined);
    assert.equal(planned.decision("base image registry")?.choice, ref);

    const [, repository, tag] = /^[^/]+\/(.+):([^:]+)$/.exec(ref)!;
    const registryDigest = await pushIndex(repository!, tag!);
    assert.match(registryDigest, /^sha256:[0-9a-f]{64}$/);

    const fetched = await init(root, "--registry-mirror", mirror, "--fetch");
    assert.equal(fetched.baseArg, `${ref}@${registryDigest}`, fetched.dockerfile);
    assert.match(fetched.dockerfile, /# Pinned by digest \(the digest the registry named for/);
    assert.equal(fetched.json.plan.container.digest?.value, registryDigest);
    assert.equal(fetched.decision("base image digest")?.choice, registryDigest);
    // The core function agrees with the registry for the tag and passes a digest through.
    const client = new HttpClient();
    assert.equal(await readTagDigest(ref, client), registryDigest);
    assert.equal(await readTagDigest(`${ref}@${registryDigest}`, client), registryDigest);
  },
);

test(
  "init --fetch with a registry that does not answer keeps the tag pin and says why",
  { skip },
  async () => {
    const root = project("digest-unreachable");
    const closed = `127.0.0.1:${await freePort()}`;
    const result = await init(root, "--registry-mirror", closed, "--fetch");
    const ref = result.json.plan.container.ref;
    assert.equal(result.baseArg, ref);
    assert.equal(result.json.plan.container.digest, undefined);
    const decision = result.decision("base image digest");
    assert.equal(decision?.choice, "pinned by tag");
    assert.match(
      decision.reason,
      new RegExp(`could not ask the registry for ${ref.replace(/[.]/g, "\\.")}'s digest`),
    );
  },
);

test("a registry whose Docker-Content-Digest is not the hash of the manifest it served is refused", async () => {
  const index = Buffer.from(
    JSON.stringify({ schemaVersion: 2, mediaType: "application/vnd.oci.image.index.v1+json", manifests: [] }),
  );
  const other = `sha256:${"0".repeat(64)}`;
  const server = await startServer(null, {
    ranges: false,
    routes: {
      "/v2/nvidia/pytorch/manifests/25.11-py3": (_request, response) =>
        response
          .writeHead(200, {
            "content-type": "application/vnd.oci.image.index.v1+json",
            "docker-content-digest": other,
          })
          .end(index),
    },
  });
  try {
    const host = new URL(server.url).host;
    await assert.rejects(
      readTagDigest(`${host}/nvidia/pytorch:25.11-py3`, new HttpClient()),
      /does not hash to the Docker-Content-Digest/,
    );
  } finally {
    await server.close();
  }
});

test("--registry-mirror that is not a registry host is refused in one line", async () => {
  const root = project("digest-bad-mirror");
  for (const bad of ["https://harbor.corp", "harbor.corp/nvcr:25.11", "harbor corp", "ftp://x"]) {
    const result = await runCli([
      "init",
      "--project",
      root,
      "--target",
      "h100",
      "--strategy",
      "container",
      "--dry-run",
      "--registry-mirror",
      bad,
    ]);
    assert.equal(result.code, 2, `${bad}: ${result.stderr}`);
    assert.match(result.stderr, /--registry-mirror .* is not a registry host\[:port\]\[\/path\]/);
    assert.equal(result.stderr.trim().split("\n").length <= 2, true, result.stderr);
  }
});
