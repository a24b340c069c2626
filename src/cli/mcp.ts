/**
 * `reach-wasm mcp <pack> [--out DIR] [--key FILE] [--trust FILE] [--unrestricted] [--http HOST:PORT] [--token TOKEN]`:
 * the pack's tools as an MCP server (`src/mcp/`). One MCP session is one session run. Its calls execute on this
 * thread while each holds it at most {@link INLINE_FIRST_MS}; the first that holds it longer (a tool that computes)
 * moves the session to its own engine thread, where this thread's event loop stays free and a signal acts while a
 * tool computes (`openIsolatedSession` with `inlineFirstMs`: the record is the same either way).
 *
 * stdio by default: the session run ends COMPLETED at stdin's end (the client disconnected) and ABORTED at SIGINT or
 * SIGTERM. `--http`: Streamable HTTP at `http://HOST:PORT/mcp`, each MCP session its own run, ended by the client's
 * DELETE or, ABORTED, when a signal stops the server. Every ended run's capsule and run files are written atomically
 * under `--out` (as `run` writes them) the moment it ends, and the capsule's path is printed on stderr. stdout is the
 * protocol's alone. Exit 0 when every session run COMPLETED and was written, 1 otherwise, 2 bad invocation or pack.
 * @module
 */
import { join } from "node:path";
import process from "node:process";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import type { EngineRun } from "../engine/engine.ts";
import { McpHttpHandler, McpSessionRun, MCP_PATH, answerMalformed, createMcpServer } from "../mcp/mod.ts";
import type { McpEnded, McpEngine, McpRunSink } from "../mcp/mod.ts";
import { openIsolatedSession } from "../platform/engine-thread.ts";
import type { IsolatedSession, WireRequest } from "../platform/engine-thread.ts";
import { readHostFile } from "../platform/files.ts";
import { serveHttp } from "../platform/http-server.ts";
import { prepareOutDir } from "../platform/out-dir.ts";
import { readPackFiles } from "../platform/pack-files.ts";
import { readTrustStoreText } from "../platform/trust-file.ts";
import { abortOnSignals, writeDirAtomic, writeFileAtomic } from "../platform/write.ts";
import type { CliIO } from "./io.ts";
import { parseMcpArgs } from "./mcp-args.ts";
import type { McpArgs } from "./mcp-args.ts";
import { VERSION } from "./version.ts";

const INFO = { name: "reach-wasm", version: VERSION };
/** How long one call may hold this thread before its session moves to an engine thread (a hop costs each call ~0.2 ms). */
const INLINE_FIRST_MS = 50;

/** Where ended runs go: capsule and run files under `--out`, atomically; the capsule's path on stderr. */
function runSink(outRoot: string, io: CliIO, outcomes: EngineRun[]): McpRunSink {
  return async (run) => {
    outcomes.push(run);
    const capsule = join(outRoot, run.capsule.name);
    await writeFileAtomic(capsule, run.capsule.bytes);
    await writeDirAtomic(join(outRoot, "runs", run.runHash), run.files);
    const why = run.error === null ? "" : ` (${run.error.code}: ${run.error.message})`;
    io.stderr(`reach-wasm mcp: session run ${run.status} ${run.runHash}${why}\nreach-wasm mcp: capsule ${capsule}${run.capsule.signed ? " (signed)" : ""}\n`);
    return capsule;
  };
}

/** The wire request of every session: the pack, the trust decision, the key; tools get the runtime's fetch. */
async function wireRequest(args: McpArgs): Promise<WireRequest> {
  const files = await readPackFiles(args.pack);
  const storeText = await readTrustStoreText(args.trust);
  const keyFileText = args.key === undefined ? undefined : new TextDecoder().decode(await readHostFile(args.key, 64 * 1024));
  return { pack: { files }, trust: { storeText, unrestricted: args.unrestricted }, ...(keyFileText === undefined ? {} : { keyFileText }), network: true };
}

function untilAborted(signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => (signal.aborted ? resolve() : signal.addEventListener("abort", () => resolve(), { once: true })));
}

function exitCode(ended: readonly McpEnded[]): number {
  return ended.every((e) => e.run?.status === "COMPLETED" && e.capsule !== null) ? 0 : 1;
}

function reportFailures(io: CliIO, ended: readonly McpEnded[]): void {
  for (const e of ended) {
    if (e.error === null) continue;
    io.stderr(e.run === null ? `reach-wasm: ${e.error.code}: a session run ended without a capsule: ${e.error.message}\n` : `reach-wasm: ${e.error.code}: the session run ended ${e.run.status} but its results could not be written: ${e.error.message}\n`);
  }
}

/**
 * The `mcp` command.
 * @param argv arguments after `mcp`
 * @param io output streams (stdout is left to the protocol)
 * @returns the exit code
 * @throws ReachError `PROTO_INVALID_ARGUMENT` / `PACK_*` before serving (exit 2)
 * @example process.exitCode = await runMcpCommand(["packs/hello"], io);
 */
export async function runMcpCommand(argv: readonly string[], io: CliIO): Promise<number> {
  const args = parseMcpArgs(argv, process.env["REACH_WASM_MCP_TOKEN"]);
  const quiet = args.quiet || io.quiet === true;
  const say = (text: string): void => void (quiet ? undefined : io.stderr(`reach-wasm mcp: ${text}\n`));
  const outRoot = await prepareOutDir(args.out, args.pack);
  const request = await wireRequest(args);
  const signals = abortOnSignals();
  const outcomes: EngineRun[] = [];
  try {
    const sink = runSink(outRoot, io, outcomes);
    // The first session is opened before serving: a pack that cannot run is refused at once (exit 2).
    const first = await openIsolatedSession(request, { signal: signals.signal, inlineFirstMs: INLINE_FIRST_MS });
    const what = `pack ${first.pack.id} ${first.pack.version} (${first.pack.restricted ? "restricted" : "unrestricted"}; ${first.tools.length} tools)`;
    const ended = args.http === null ? await serveStdio(first, sink, signals.signal, say, what) : await serveOnHttp(args, request, first, sink, signals.signal, say, what);
    reportFailures(io, ended);
    return exitCode(ended);
  } finally {
    signals.dispose();
  }
}

/** One session over stdin/stdout until stdin ends (COMPLETED) or a signal (ABORTED). */
async function serveStdio(session: IsolatedSession, sink: McpRunSink, signal: AbortSignal, say: (t: string) => void, what: string): Promise<McpEnded[]> {
  const run = new McpSessionRun(session, sink);
  const server = createMcpServer(run, INFO);
  const transport = new StdioServerTransport();
  answerMalformed(transport);
  const eof = new Promise<void>((resolve) => {
    process.stdin.once("end", resolve);
    process.stdin.once("close", resolve);
  });
  const closed = new Promise<void>((resolve) => (transport.onclose = resolve));
  await server.connect(transport);
  say(`serving ${what} over stdio; the session run ends when stdin ends`);
  await Promise.race([eof, closed, untilAborted(signal)]);
  if (!signal.aborted) await run.idle(); // stdin ended: what was asked before is answered, then the run ends
  const ended = await run.end(signal.aborted);
  await run.idle(); // the calls that came before the end are answered before the transport closes
  await new Promise((resolve) => setTimeout(resolve, 0));
  await server.close();
  process.stdin.destroy(); // nothing more is read: let the process exit
  return [ended];
}

/** Streamable HTTP until a signal: each MCP session a session run; the first one opened already (the spare). */
async function serveOnHttp(args: McpArgs, request: WireRequest, first: IsolatedSession, sink: McpRunSink, signal: AbortSignal, say: (t: string) => void, what: string): Promise<McpEnded[]> {
  let spare: IsolatedSession | null = first;
  const engine: McpEngine = {
    openSession: async (options) => {
      const s = spare;
      spare = null;
      return s ?? (await openIsolatedSession(request, { ...options, inlineFirstMs: INLINE_FIRST_MS }));
    },
  };
  const ended: McpEnded[] = [];
  const handler = new McpHttpHandler({
    engine, sink, info: INFO, token: args.token, loopbackOnly: args.token === null, signal,
    onSession: (e) => (e.kind === "open" ? say(`session ${e.id} opened`) : (ended.push(e.ended), say(`session ${e.id} ended`))),
  });
  const listen = args.http!;
  const server = await serveHttp(handler.fetch, listen);
  say(`serving ${what} at ${server.url}${MCP_PATH}${args.token === null ? " (loopback clients only)" : " (bearer token required)"}; Ctrl-C stops it`);
  await untilAborted(signal);
  await handler.close(true);
  await server.close();
  if (spare !== null) await (spare as IsolatedSession).close(true).catch(() => undefined); // never used: no capsule
  return ended;
}
