/** Whether a process still runs, for tests that check a kill reached a whole process group. */
import { readFileSync } from "node:fs";

/** kill -0, counting a zombie (dead, waiting for a reaper this container may not have) as gone. */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const state = stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3);
    return state !== "Z";
  } catch {
    return false;
  }
}

/** Processes die a moment after SIGKILL; poll briefly before calling one alive. */
export async function waitGone(pid: number, ms = 2000): Promise<boolean> {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    if (!isAlive(pid)) return true;
    await new Promise((r) => setTimeout(r, 50));
  }
  return !isAlive(pid);
}
