#!/usr/bin/env bash
# gpuprep scan of container images through a real Docker engine and a real registry:
#   1. an image built by the engine FROM scratch: the nvcc-built libraries of test/fixtures/wheels
#      in one layer, one of them deleted by a RUN step (the engine writes the whiteout), another
#      library in a third layer;
#   2. `docker save` of it, scanned as a tar (gpuprep scan image.tar --target dgx-spark);
#   3. the image pushed to Debian's docker-registry (the distribution registry 2.8) on 127.0.0.1
#      with token auth from a loopback token server (test/remote/token-server.ts), and scanned as
#      docker://127.0.0.1:PORT/... : anonymous pull token, manifest and blobs by digest.
# Both scans must agree: libsm90.so cannot run on 12.1, libptx80.so runs by PTX JIT, libsm120ptx.so
# natively, libsm100a.so is gone (removed by the later layer). Needs root, docker.io,
# docker-registry, openssl, node. Run by test/e2e/images.test.ts on CI.
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
# shellcheck source=test/e2e/prelude.sh
. "$repo/test/e2e/prelude.sh"
command -v docker-registry > /dev/null || fail "docker-registry is not installed: apt-get install docker-registry"
start_engine

registry_pid=""
token_pid=""
stop_servers() {
  if [ -n "$registry_pid" ]; then kill "$registry_pid" 2> /dev/null || true; fi
  if [ -n "$token_pid" ]; then kill "$token_pid" 2> /dev/null || true; fi
}
trap 'stop_servers; engine_cleanup' EXIT

step "image FROM scratch, one library deleted in a RUN step"
ctx="$work/context"
mkdir -p "$ctx/base" "$ctx/extra"
cp "$repo/test/fixtures/images/rm" "$ctx/rm"
cp "$repo"/test/fixtures/wheels/{libsm90.so,libsm100a.so,libptx80.so} "$ctx/base/"
cp "$repo/test/fixtures/wheels/libsm120ptx.so" "$ctx/extra/"
cat > "$ctx/Dockerfile" << 'DOCKERFILE'
FROM scratch
COPY rm /rm
COPY base/ /opt/cudalibs/
RUN ["/rm", "/opt/cudalibs/libsm100a.so"]
COPY extra/ /opt/extra/
DOCKERFILE
image="gpuprep-test/cudalibs:$$"
docker build --network none -q -t "$image" "$ctx" > /dev/null
docker save "$image" -o "$work/image.tar"

step "registry on 127.0.0.1 with anonymous token auth"
free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=gpuprep-test-token \
  -keyout "$work/token.key" -out "$work/token.pem" 2> /dev/null
: > "$work/token.log"
node "$repo/dist/test/remote/token-server.js" "$work/token.key" "$work/token.pem" gpuprep-test-registry gpuprep-test-issuer "$work/token.log" > "$work/token.url" &
token_pid=$!
for _ in $(seq 50); do [ -s "$work/token.url" ] && break; sleep 0.1; done
port="$(free_port)"
cat > "$work/registry.yml" << YAML
version: 0.1
log:
  level: warn
storage:
  filesystem:
    rootdirectory: $work/registry-data
http:
  addr: 127.0.0.1:$port
auth:
  token:
    realm: $(cat "$work/token.url")/token
    service: gpuprep-test-registry
    issuer: gpuprep-test-issuer
    rootcertbundle: $work/token.pem
YAML
docker-registry serve "$work/registry.yml" > "$work/registry.log" 2>&1 &
registry_pid=$!
for _ in $(seq 50); do
  code="$(python3 -c 'import sys, urllib.request
try: urllib.request.urlopen(sys.argv[1])
except Exception as e: print(getattr(e, "code", 0))' "http://127.0.0.1:$port/v2/")"
  [ "$code" = 401 ] && break
  sleep 0.2
done
[ "$code" = 401 ] || fail "the registry did not answer 401 on /v2/: $(tail -n 3 "$work/registry.log")"
remote="127.0.0.1:$port/gpuprep-test/cudalibs:1"
docker tag "$image" "$remote"
docker push -q "$remote" > /dev/null || fail "docker push: $(tail -n 3 "$work/registry.log")"
: > "$work/token.log"

run_json() { # out-file, gpuprep args...
  local out=$1 status=0
  shift
  gpuprep "$@" --json > "$out" 2> "$out.err" || status=$?
  [ "$status" -le 1 ] || fail "gpuprep $* exited $status: $(head -n 3 "$out.err")"
}
step "gpuprep scan image.tar --target dgx-spark"
run_json "$work/archive.json" scan "$work/image.tar" --target dgx-spark
step "gpuprep scan docker://$remote --target dgx-spark"
# The image was built here (amd64); a single manifest is read as it is, whatever the target's CPU.
run_json "$work/registry.json" scan "docker://$remote" --target dgx-spark

step "checks"
python3 - "$work" << 'PY'
import json, sys
work = sys.argv[1]
problems = []
expected = {"opt/cudalibs/libsm90.so": "none", "opt/cudalibs/libptx80.so": "ptx-jit", "opt/extra/libsm120ptx.so": "sass"}
for name in ("archive.json", "registry.json"):
    report = json.load(open("%s/%s" % (work, name)))
    got = {lib["path"]: lib["verdict"]["how"] for lib in report["libraries"] if lib["verdict"]}
    if got != expected:
        problems.append("%s: verdicts %r, expected %r" % (name, got, expected))
    source = report["sources"][0]
    if source["removed"] != ["opt/cudalibs/libsm100a.so"]:
        problems.append("%s: removed %r (the RUN step's whiteout)" % (name, source["removed"]))
    if report["device"]["computeCapability"] != "12.1":
        problems.append("%s: device %r" % (name, report["device"]))
registry = json.load(open("%s/registry.json" % work))["sources"][0]
if registry["transfer"] != "registry" or registry["bytesFetched"] <= 0:
    problems.append("registry: transfer %r, %r bytes fetched" % (registry["transfer"], registry["bytesFetched"]))
tokens = [json.loads(line) for line in open("%s/token.log" % work)]
pulls = [t for t in tokens if any(s.endswith(":pull") for s in t["scopes"])]
if not pulls or any(t["authorization"] for t in tokens):
    problems.append("token server: %r (expected an anonymous pull token request)" % tokens)
for problem in problems:
    print("FAIL:", problem, file=sys.stderr)
sys.exit(1 if problems else 0)
PY
echo "images e2e: ok (docker save archive and registry with token auth: 3 libraries, 1 whiteout, $(wc -l < "$work/token.log") token request)"
