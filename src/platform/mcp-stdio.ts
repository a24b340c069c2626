/**
 * Starting a pack's stdio MCP servers (the engine's `McpStdioLauncher`, `src/protocol/mcp-client.ts`), on Node and
 * Deno. Not the SDK's transport: that one gives the child HOME, LOGNAME, SHELL, TERM and USER from the parent and
 * stops only the child. Here the child gets exactly the environment its entry declares plus PATH, runs in a fresh
 * scratch directory (its working directory; `{{scratch}}` in its arguments and environment values), in its own
 * process group, and closing stops the whole group (TERM, then KILL after a grace) and removes the scratch directory.
 * Messages are newline-delimited JSON (MCP stdio); a line that is not JSON is skipped.
 * @module
 */
import type { ChildProcess } from "node:child_process";
import { mkdtempSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";
import { ReachError } from "../protocol/mod.ts";
import type { McpStdioLaunch, McpStdioProcess, McpTransport } from "../protocol/mod.ts";

/** Most bytes of one message line (64 MiB): a longer line ends the connection. */
const MAX_LINE_BYTES = 64 * 1024 * 1024;
/** How much of the server's stderr is kept for an error message. */
const STDERR_TAIL = 2000;
/** Grace between TERM and KILL when stopping a server. */
const KILL_GRACE_MS = 1000;

/** Stop a process group (or the child alone where groups do not exist). */
function signalGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  if (child.pid === undefined) return;
  try {
    if (process.platform === "win32") child.kill(signal);
    else process.kill(-child.pid, signal);
  } catch {
    try {
      child.kill(signal);
    } catch {
      // already gone
    }
  }
}

class StdioTransport implements McpTransport {
  onmessage: ((message: unknown) => void) | null = null;
  onclose: ((reason: Error) => void) | null = null;
  readonly #child: ChildProcess;
  readonly #scratch: string;
  #buf = "";
  #closing: Promise<void> | null = null;
  #exited: Promise<void>;

  constructor(child: ChildProcess, scratch: string) {
    this.#child = child;
    this.#scratch = scratch;
    this.#exited = new Promise((resolve) => child.once("exit", () => resolve()));
    child.stdout!.setEncoding("utf8");
    child.stdout!.on("data", (chunk: string) => this.#data(chunk));
    child.once("exit", (code, signal) => {
      if (this.#closing === null) this.onclose?.(new Error(`it exited (${signal ?? `code ${code}`})`));
    });
    child.once("error", (err) => this.onclose?.(err));
  }

  #data(chunk: string): void {
    this.#buf += chunk;
    if (this.#buf.length > MAX_LINE_BYTES) {
      this.onclose?.(new Error(`it wrote a message line over ${MAX_LINE_BYTES} bytes`));
      void this.close();
      return;
    }
    let nl: number;
    while ((nl = this.#buf.indexOf("\n")) >= 0) {
      const line = this.#buf.slice(0, nl).replace(/\r$/, "");
      this.#buf = this.#buf.slice(nl + 1);
      if (line.trim() === "") continue;
      let message: unknown;
      try {
        message = JSON.parse(line);
      } catch {
        continue; // not a message (a server printing to stdout by mistake)
      }
      this.onmessage?.(message);
    }
  }

  send(message: Record<string, unknown>): Promise<void> {
    const stdin = this.#child.stdin;
    if (this.#closing !== null || stdin === null || stdin.destroyed) return Promise.reject(new Error("the server is not running"));
    return new Promise((resolve, reject) => stdin.write(`${JSON.stringify(message)}\n`, (err) => (err ? reject(err) : resolve())));
  }

  close(): Promise<void> {
    this.#closing ??= (async () => {
      this.#child.stdin?.end();
      if (this.#child.exitCode === null && this.#child.signalCode === null) {
        signalGroup(this.#child, "SIGTERM");
        const timer = setTimeout(() => signalGroup(this.#child, "SIGKILL"), KILL_GRACE_MS);
        await this.#exited;
        clearTimeout(timer);
      }
      signalGroup(this.#child, "SIGKILL"); // what the server left running in its group
      this.#child.stdout?.destroy();
      this.#child.stderr?.destroy();
      rmSync(this.#scratch, { recursive: true, force: true });
    })();
    return this.#closing;
  }
}

/**
 * Start a stdio MCP server (see the module notes).
 * @param launch the server's command, arguments and declared environment
 * @returns its transport, scratch directory and stderr tail
 * @throws ReachError `EXEC_TOOL_FAILED` when the command cannot be started
 * @example const p = await launchMcpStdio({ name: "memory", command: "node", args: ["server.js"], env: {} });
 */
export async function launchMcpStdio(launch: McpStdioLaunch): Promise<McpStdioProcess> {
  const scratch = realpathSync(mkdtempSync(join(tmpdir(), "reach-mcp-")));
  const expand = (v: string): string => v.split("{{scratch}}").join(scratch);
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(launch.env)) env[k] = expand(v);
  if (env["PATH"] === undefined && process.env["PATH"] !== undefined) env["PATH"] = process.env["PATH"];
  // loaded here, not with this module: a run that starts no server does not load it (on Deno, ~7 ms of start-up)
  const { spawn } = await import("node:child_process");
  let child: ChildProcess;
  try {
    child = spawn(expand(launch.command), launch.args.map(expand), { cwd: scratch, env, stdio: ["pipe", "pipe", "pipe"], detached: process.platform !== "win32", windowsHide: true });
  } catch (err) {
    rmSync(scratch, { recursive: true, force: true });
    throw new ReachError("EXEC_TOOL_FAILED", `the MCP server "${launch.name}" could not be started (${launch.command}): ${(err as Error).message}`, { details: { server: launch.name } });
  }
  let tail = "";
  child.stderr!.setEncoding("utf8");
  child.stderr!.on("data", (chunk: string) => void (tail = (tail + chunk).slice(-STDERR_TAIL)));
  const started = await new Promise<Error | null>((resolve) => {
    child.once("spawn", () => resolve(null));
    child.once("error", (err) => resolve(err));
  });
  const transport = new StdioTransport(child, scratch);
  if (started !== null) {
    await transport.close();
    throw new ReachError("EXEC_TOOL_FAILED", `the MCP server "${launch.name}" could not be started (${launch.command}): ${started.message}`, { details: { server: launch.name } });
  }
  return { transport, scratch, stderrTail: () => tail.trim(), ...(child.pid === undefined ? {} : { pid: child.pid }) };
}
