/**
 * A small Chrome DevTools Protocol client for tests: starts Debian's headless Chromium, opens one
 * page, and records every network request, console message, log entry and uncaught exception.
 * Node 20 has no WebSocket global, hence the `ws` package.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import WebSocket from "ws";
import { CHROMIUM as CHROMIUM_PART, requireParts } from "../support/needs.js";

export const CHROMIUM = process.env.CHROMIUM ?? "/usr/bin/chromium";

interface CdpMessage {
  id?: number;
  method?: string;
  params?: Record<string, unknown>;
  result?: Record<string, unknown>;
  error?: { message: string };
  sessionId?: string;
}

export interface PageRecord {
  requests: string[];
  problems: string[];
  text: string;
  svgRects: number;
  /** Threshold lines drawn across bars (svg line elements). */
  svgLines: number;
  /** Legend entries above charts. */
  legendEntries: number;
}

export class Browser {
  private nextId = 1;
  private pending = new Map<number, (message: CdpMessage) => void>();
  private listeners: Array<(message: CdpMessage) => void> = [];

  private constructor(
    private readonly process: ChildProcess,
    private readonly socket: WebSocket,
    private readonly profile: string,
  ) {
    socket.on("message", (data: Buffer) => {
      const message = JSON.parse(data.toString()) as CdpMessage;
      if (message.id !== undefined) {
        this.pending.get(message.id)?.(message);
        this.pending.delete(message.id);
      } else for (const listener of this.listeners) listener(message);
    });
  }

  static async launch(): Promise<Browser> {
    // Called from `before` hooks: a missing chromium fails the file's tests with the package to install.
    requireParts(CHROMIUM_PART);
    const profile = mkdtempSync(join(tmpdir(), "gpuprep-chromium-"));
    // The flags that work on a closed network as root (see the machine notes): no background
    // fetches, no sandbox, no GPU.
    const child = spawn(
      CHROMIUM,
      [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        `--user-data-dir=${profile}`,
        "--remote-debugging-port=0",
        "about:blank",
      ],
      { stdio: ["ignore", "ignore", "pipe"] },
    );
    const endpoint = await new Promise<string>((resolve, reject) => {
      let stderr = "";
      const timer = setTimeout(
        () => reject(new Error(`chromium did not start: ${stderr.slice(-500)}`)),
        30_000,
      );
      child.on("error", (error) => reject(error));
      child.stderr?.on("data", (chunk: Buffer) => {
        stderr += chunk.toString();
        const match = /DevTools listening on (ws:\/\/\S+)/.exec(stderr);
        if (match) {
          clearTimeout(timer);
          resolve(match[1] as string);
        }
      });
    });
    const socket = new WebSocket(endpoint);
    await new Promise<void>((resolve, reject) => {
      socket.once("open", () => resolve());
      socket.once("error", reject);
    });
    return new Browser(child, socket, profile);
  }

  send(method: string, params: Record<string, unknown> = {}, sessionId?: string): Promise<CdpMessage> {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, (message) =>
        message.error ? reject(new Error(`${method}: ${message.error.message}`)) : resolve(message),
      );
      this.socket.send(JSON.stringify({ id, method, params, ...(sessionId ? { sessionId } : {}) }));
    });
  }

  /** Opens url in a new page; resolves after the load event with what the page did. */
  async visit(url: string): Promise<PageRecord> {
    const created = await this.send("Target.createTarget", { url: "about:blank" });
    const targetId = created.result?.targetId as string;
    const attached = await this.send("Target.attachToTarget", { targetId, flatten: true });
    const sessionId = attached.result?.sessionId as string;
    const record: PageRecord = {
      requests: [],
      problems: [],
      text: "",
      svgRects: 0,
      svgLines: 0,
      legendEntries: 0,
    };
    let loaded: () => void = () => {};
    const loadEvent = new Promise<void>((resolve) => (loaded = resolve));
    this.listeners.push((message) => {
      if (message.sessionId !== sessionId) return;
      const params = message.params ?? {};
      if (message.method === "Network.requestWillBeSent") {
        record.requests.push((params.request as { url: string }).url);
      } else if (message.method === "Runtime.consoleAPICalled") {
        const type = params.type as string;
        if (type === "error" || type === "warning" || type === "assert")
          record.problems.push(`console.${type}`);
      } else if (message.method === "Runtime.exceptionThrown") {
        record.problems.push(`exception: ${JSON.stringify(params.exceptionDetails).slice(0, 300)}`);
      } else if (message.method === "Log.entryAdded") {
        const entry = params.entry as { level: string; text: string };
        if (entry.level === "error" || entry.level === "warning")
          record.problems.push(`log ${entry.level}: ${entry.text}`);
      } else if (message.method === "Page.loadEventFired") loaded();
    });
    for (const domain of ["Network", "Runtime", "Log", "Page"])
      await this.send(`${domain}.enable`, {}, sessionId);
    await this.send("Page.navigate", { url }, sessionId);
    await loadEvent;
    // Give late requests (fonts, images) a moment to show up before reading the page.
    await new Promise((resolve) => setTimeout(resolve, 300));
    const evaluate = async (expression: string) =>
      (
        (await this.send("Runtime.evaluate", { expression, returnByValue: true }, sessionId)).result
          ?.result as {
          value: unknown;
        }
      ).value;
    record.text = String(await evaluate("document.body.innerText"));
    record.svgRects = Number(await evaluate("document.querySelectorAll('svg rect').length"));
    record.svgLines = Number(await evaluate("document.querySelectorAll('svg line').length"));
    record.legendEntries = Number(await evaluate("document.querySelectorAll('.legend > span').length"));
    return record;
  }

  async close(): Promise<void> {
    try {
      await this.send("Browser.close");
    } catch {
      // already gone
    }
    this.socket.close();
    await new Promise<void>((resolve) => {
      if (this.process.exitCode !== null || this.process.signalCode !== null) resolve();
      else this.process.once("exit", () => resolve());
    });
    rmSync(this.profile, { recursive: true, force: true });
  }
}
