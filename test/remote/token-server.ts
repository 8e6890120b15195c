/**
 * A loopback token server for the distribution registry's token auth
 * (https://distribution.github.io/distribution/spec/auth/token/): anyone gets a token for the
 * scope asked (anonymous pull, and push for the test's `docker push`), an RS256 JWT whose x5c
 * header carries the certificate the registry's `rootcertbundle` trusts. Every request is logged
 * one line per request (its scope and whether an Authorization header came), for the e2e's checks.
 *
 * usage: node dist/test/remote/token-server.js KEY.pem CERT.pem SERVICE ISSUER LOG   (prints its URL)
 */
import { createServer } from "node:http";
import { appendFileSync, readFileSync } from "node:fs";
import { createPrivateKey, randomBytes, sign } from "node:crypto";
import type { AddressInfo } from "node:net";

const [keyPath, certPath, service, issuer, log] = process.argv.slice(2) as [
  string,
  string,
  string,
  string,
  string,
];
const key = createPrivateKey(readFileSync(keyPath));
const certificate = readFileSync(certPath, "utf8")
  .replace(/-----(BEGIN|END) CERTIFICATE-----/g, "")
  .replace(/\s+/g, "");

const base64url = (value: Buffer | string) => Buffer.from(value).toString("base64url");

/** "repository:team/app:pull,push" -> one access claim. */
function access(scope: string): { type: string; name: string; actions: string[] }[] {
  const match = /^([a-z]+):(.+):([a-z*,]+)$/.exec(scope);
  return match
    ? [{ type: match[1] as string, name: match[2] as string, actions: (match[3] as string).split(",") }]
    : [];
}

const server = createServer((request, response) => {
  const url = new URL(request.url ?? "/", "http://localhost");
  const scopes = url.searchParams.getAll("scope");
  appendFileSync(
    log,
    `${JSON.stringify({ path: url.pathname, scopes, service: url.searchParams.get("service"), authorization: Boolean(request.headers.authorization) })}\n`,
  );
  const now = Math.floor(Date.now() / 1000);
  const header = { typ: "JWT", alg: "RS256", x5c: [certificate] };
  const claims = {
    iss: issuer,
    sub: "",
    aud: service,
    exp: now + 600,
    nbf: now - 60,
    iat: now,
    jti: randomBytes(12).toString("hex"),
    access: scopes.flatMap(access),
  };
  const unsigned = `${base64url(JSON.stringify(header))}.${base64url(JSON.stringify(claims))}`;
  const token = `${unsigned}.${base64url(sign("sha256", Buffer.from(unsigned), key))}`;
  response.writeHead(200, { "content-type": "application/json" });
  response.end(
    JSON.stringify({ token, access_token: token, expires_in: 600, issued_at: new Date().toISOString() }),
  );
});
server.listen(0, "127.0.0.1", () => {
  process.stdout.write(`http://127.0.0.1:${(server.address() as AddressInfo).port}\n`);
});
