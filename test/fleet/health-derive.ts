/**
 * GPU health outputs derived from the real H200 capture (test/fixtures/gpu-health/h200, all
 * counters zero) by changing named values, and stand-in nvidia-smi / dmesg programs that replay
 * them, so the real probe reads them. Each change names the element it sets; the shapes of
 * non-zero values follow the public captures listed in test/fixtures/gpu-health/README.md.
 */
import { chmodSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

export const CAPTURE = new URL("../../../test/fixtures/gpu-health/h200/", import.meta.url).pathname;

export function captured(file: string): string {
  return readFileSync(join(CAPTURE, file), "utf8");
}

/** Sets `<tag>value</tag>` inside the first `<section>...</section>` of the XML. */
export function setXml(xml: string, section: string, tag: string, value: string): string {
  const open = xml.indexOf(`<${section}>`);
  const close = xml.indexOf(`</${section}>`, open);
  if (open < 0 || close < 0) throw new Error(`no <${section}> in the capture`);
  const body = xml.slice(open, close);
  const changed = body.replace(new RegExp(`<${tag}>[^<]*</${tag}>`), `<${tag}>${value}</${tag}>`);
  if (changed === body) throw new Error(`no <${tag}> in <${section}>`);
  return xml.slice(0, open) + changed + xml.slice(close);
}

/**
 * The unhealthy H200: 2 uncorrectable DRAM ECC errors since the reset (volatile and aggregate), a
 * pending row remap with 1 correctable row remapped, the hardware slowdown reason active, and the
 * fabric registration stuck "In Progress" (as on an NVSwitch system whose fabric manager is down).
 */
export function unhealthyXml(): string {
  let xml = captured("smi-q.xml");
  xml = setXml(xml, "volatile", "dram_uncorrectable", "2");
  xml = setXml(xml, "aggregate", "dram_uncorrectable", "2");
  xml = setXml(xml, "remapped_rows", "remapped_row_corr", "1");
  xml = setXml(xml, "remapped_rows", "remapped_row_pending", "Yes");
  xml = setXml(xml, "clocks_event_reasons", "clocks_event_reason_hw_slowdown", "Active");
  xml = setXml(xml, "fabric", "state", "In Progress");
  return xml;
}

/** `nvidia-smi nvlink -e` in the H100 format of stas00/ml-engineering's debug guide, link 1 with 12 CRC errors. */
export const NVLINK_ERRORS = [
  "GPU 0: NVIDIA H200 (UUID: GPU-a07a301b-3c6e-4759-7e26-711ec9affe35)",
  "\t Link 0: Replay Errors: 0",
  "\t Link 0: Recovery Errors: 0",
  "\t Link 0: CRC Errors: 0",
  "",
  "\t Link 1: Replay Errors: 0",
  "\t Link 1: Recovery Errors: 0",
  "\t Link 1: CRC Errors: 12",
  "",
].join("\n");

/**
 * The capture's kernel log plus two Xid lines as users logged them: Xid 63 from stas00/ml-engineering
 * (compute/accelerator/nvidia/debug.md at 62d4359e) and Xid 79 from NVIDIA/open-gpu-kernel-modules#1151.
 */
export function kernelLogWithXids(): string {
  return (
    captured("kernel-log.txt") +
    "[ 1204.100000] NVRM: Xid (PCI:0000:00:06): 63, pid=1896, Row Remapper: New row marked for remapping, reset gpu to activate.\n" +
    "[ 5310.200000] NVRM: Xid (PCI:0000:00:06): 79, GPU has fallen off the bus.\n"
  );
}

/**
 * A directory with stand-in nvidia-smi and dmesg: `-q -x` prints `xml`, `nvlink -e` prints
 * `nvlink`, `--query-gpu` the H200's row in the probe's format, anything else the capture's
 * `nvidia-smi`; dmesg prints `kernelLog` (or fails like an unprivileged one when null).
 */
export function standIns(options: { xml: string; nvlink: string; kernelLog: string | null }): string {
  const dir = mkdtempSync(join(tmpdir(), "gpuprep-health-"));
  writeFileSync(join(dir, "smi-q.xml"), options.xml);
  writeFileSync(join(dir, "nvlink.txt"), options.nvlink);
  writeFileSync(join(dir, "kernel.txt"), options.kernelLog ?? "");
  const query =
    "0, NVIDIA H200, GPU-a07a301b-3c6e-4759-7e26-711ec9affe35, 9.0, 143771, Disabled, Enabled, 00000000:00:06.0, 580.159.04, 5, 16, 5, 16";
  writeFileSync(
    join(dir, "nvidia-smi"),
    [
      "#!/bin/sh",
      'case "$*" in',
      `  "-q -x") exec cat ${dir}/smi-q.xml ;;`,
      `  "nvlink -e") exec cat ${dir}/nvlink.txt ;;`,
      `  --query-gpu=*) echo '${query}' ;;`,
      `  *) exec cat ${CAPTURE}/smi.txt ;;`,
      "esac",
      "",
    ].join("\n"),
  );
  writeFileSync(
    join(dir, "dmesg"),
    options.kernelLog === null
      ? "#!/bin/sh\necho 'dmesg: read kernel buffer failed: Operation not permitted' >&2\nexit 1\n"
      : `#!/bin/sh\nexec cat ${dir}/kernel.txt\n`,
  );
  chmodSync(join(dir, "nvidia-smi"), 0o755);
  chmodSync(join(dir, "dmesg"), 0o755);
  return dir;
}
