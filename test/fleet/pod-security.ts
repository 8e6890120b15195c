/**
 * The Pod Security Standards' "restricted" profile as checks on a pod spec, for the tests (no
 * admission controller can run here): every control of the Baseline and Restricted tables of
 * https://kubernetes.io/docs/concepts/security/pod-security-standards/ that a pod spec can break,
 * each returning the field and what is wrong, in the words of the API server's message ("violates
 * PodSecurity "restricted:latest": allowPrivilegeEscalation != false ...").
 */

type Json = Record<string, unknown>;

const obj = (v: unknown): Json => (typeof v === "object" && v !== null ? (v as Json) : {});
const list = (v: unknown): Json[] => (Array.isArray(v) ? (v as Json[]) : []);

/** Restricted: only these volume types. */
const ALLOWED_VOLUMES = [
  "configMap",
  "csi",
  "downwardAPI",
  "emptyDir",
  "ephemeral",
  "persistentVolumeClaim",
  "projected",
  "secret",
];
/** Baseline: capabilities a container may add (Restricted allows NET_BIND_SERVICE only). */
const RESTRICTED_ADD = new Set(["NET_BIND_SERVICE"]);
/** Baseline: sysctls a pod may set. */
const SAFE_SYSCTLS = new Set([
  "kernel.shm_rmid_forced",
  "net.ipv4.ip_local_port_range",
  "net.ipv4.ip_unprivileged_port_start",
  "net.ipv4.tcp_syncookies",
  "net.ipv4.ping_group_range",
  "net.ipv4.ip_local_reserved_ports",
  "net.ipv4.tcp_keepalive_time",
  "net.ipv4.tcp_fin_timeout",
  "net.ipv4.tcp_keepalive_intvl",
  "net.ipv4.tcp_keepalive_probes",
]);

function containerViolations(c: Json, pod: Json): string[] {
  const name = typeof c["name"] === "string" ? c["name"] : "?";
  const sc = obj(c["securityContext"]);
  const podSc = obj(pod["securityContext"]);
  const out: string[] = [];
  if (sc["privileged"] === true)
    out.push(`privileged (container "${name}" must not set securityContext.privileged=true)`);
  if (sc["allowPrivilegeEscalation"] !== false)
    out.push(
      `allowPrivilegeEscalation != false (container "${name}" must set securityContext.allowPrivilegeEscalation=false)`,
    );
  const caps = obj(sc["capabilities"]);
  const drop = list(caps["drop"]).map(String);
  if (!drop.includes("ALL"))
    out.push(
      `unrestricted capabilities (container "${name}" must set securityContext.capabilities.drop=["ALL"])`,
    );
  const added = list(caps["add"])
    .map(String)
    .filter((cap) => !RESTRICTED_ADD.has(cap));
  if (added.length)
    out.push(
      `unrestricted capabilities (container "${name}" must not include ${added.join(", ")} in securityContext.capabilities.add)`,
    );
  const nonRoot = sc["runAsNonRoot"] ?? podSc["runAsNonRoot"];
  if (nonRoot !== true)
    out.push(`runAsNonRoot != true (pod or container "${name}" must set securityContext.runAsNonRoot=true)`);
  if ((sc["runAsUser"] ?? podSc["runAsUser"]) === 0)
    out.push(`runAsUser=0 (container "${name}" must not set runAsUser=0)`);
  const seccomp = obj(sc["seccompProfile"])["type"] ?? obj(podSc["seccompProfile"])["type"];
  if (seccomp !== "RuntimeDefault" && seccomp !== "Localhost")
    out.push(
      `seccompProfile (pod or container "${name}" must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost")`,
    );
  if (list(c["ports"]).some((p) => p["hostPort"] !== undefined && p["hostPort"] !== 0))
    out.push(`hostPort (container "${name}" uses hostPort)`);
  if (sc["procMount"] !== undefined && sc["procMount"] !== "Default")
    out.push(`procMount (container "${name}" must not set procMount)`);
  return out;
}

/** Every restricted-profile violation of a pod spec (empty: the restricted namespace admits it). */
export function restrictedViolations(podSpec: Json): string[] {
  const out: string[] = [];
  for (const key of ["hostNetwork", "hostPID", "hostIPC"])
    if (podSpec[key] === true) out.push(`host namespaces (${key}=true)`);
  for (const volume of list(podSpec["volumes"])) {
    const type = Object.keys(volume).find((k) => k !== "name");
    if (!type || !ALLOWED_VOLUMES.includes(type))
      out.push(`restricted volume types (volume "${String(volume["name"])}" uses ${type ?? "no"} volume)`);
  }
  for (const sysctl of list(obj(podSpec["securityContext"])["sysctls"]))
    if (!SAFE_SYSCTLS.has(String(sysctl["name"]))) out.push(`forbidden sysctls (${String(sysctl["name"])})`);
  for (const c of [
    ...list(podSpec["initContainers"]),
    ...list(podSpec["containers"]),
    ...list(podSpec["ephemeralContainers"]),
  ])
    out.push(...containerViolations(c, podSpec));
  return out;
}
