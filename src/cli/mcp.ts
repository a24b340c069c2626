/**
 * `reach-wasm mcp <pack> [--out DIR] [--key FILE] [--trust FILE] [--unrestricted] [--http HOST:PORT] [--token TOKEN]
 * [--step-timeout MS]`: the pack's tools as an MCP server (`src/mcp/`). One MCP session is a chain of session runs
 * (conformance/HASHING.md "Session chains"): a refused call never ends it; a policy violation or a spent budget ends
 * the current run (its capsule is written at once) and the next call continues in a new run from the same workspace
 * and memory. Its calls execute on this thread while each holds it at most {@link INLINE_FIRST_MS}; the first that
 * holds it longer (a tool that computes) moves the run to its own engine thread, where this thread's event loop stays
 * free and a signal acts while a tool computes (`openIsolatedSession` with `inlineFirstMs`: the record is the same
 * either way).
 *
 * stdio by default (messages of at most 4 MiB; a longer one is answered with an error and the server goes on): the
 * session's last run ends COMPLETED at stdin's end (the client disconnected) and ABORTED at SIGINT or SIGTERM.
 * `--http`: Streamable HTTP at `http://HOST:PORT/mcp`, each MCP session its own chain, ended by the client's DELETE
 * or, ABORTED, when a signal stops the server. Every ended run's capsule and run files are written atomically under
 * `--out` (as `run` writes them) the moment it ends, the capsule's path is printed on stderr, and
 * `--out/sessions/<first run hash>.json` lists the session's runs in order. stdout is the protocol's alone. Exit 0
 * when every session run COMPLETED and was written, 1 otherwise, 2 bad invocation or pack.
 * @module
 */
import { join } from "node:path";
import process from "node:process";
import type { EngineRun } from "../engine/mod.ts";
import { SESSION_START } from "../engine/mod.ts";
import { BoundedStdioTransport, DEFAULT_IDLE_TIMEOUT_MS, DEFAULT_MAX_SESSIONS, McpHttpHandler, McpSessionRun, MCP_PATH, answerMalformed, createMcpServer } from "../mcp/mod.ts";
import type { McpEnded, McpEngine, McpRunSink, McpSegment } from "../mcp/mod.ts";
import { openIsolatedSession } from "../host/mod.ts";
import type { IsolatedSession, WireRequest } from "../host/mod.ts";
import { readPrivateKeyFile } from "../platform/files.ts";
import { serveHttp } from "../platform/http-server.ts";
import { prepareOutDir } from "../platform/out-dir.ts";
import { readPackFiles } from "../host/mod.ts";
import { readTrustStoreText } from "../platform/trust-file.ts";
import { abortOnSignals, writeDirAtomic, writeFileAtomic } from "../platform/write.ts";
import type { CliIO } from "./io.ts";
import { isLoopback, parseMcpArgs } from "./mcp-args.ts";
import { sessionIndex } from "./mcp-index.ts";
import type { McpArgs } from "./mcp-args.ts";
import { VERSION } from "./version.ts";
import type { ReachError } from "../protocol/mod.ts";
import { readSecrets } from "./secret-args.ts";

const INFO = { name: "reach-wasm", version: VERSION };
/** How long one call may hold this thread before its session moves to an engine thread (a hop costs each call ~0.2 ms). */
const INLINE_FIRST_MS = 50;

/** What the server keeps of each ended run for its exit code (never the capsule's bytes). */
type Outcome = { status: EngineRun["status"]; written: boolean };

/** Where ended runs go: capsule and run files under `--out`, atomically; the capsule's path on stderr. */
function runSink(outRoot: string, io: CliIO, outcomes: Outcome[]): McpRunSink {
  return async (run) => {
    const outcome: Outcome = { status: run.status, written: false };
    outcomes.push(outcome);
    const capsule = join(outRoot, run.capsule.name);
    await writeFileAtomic(capsule, run.capsule.bytes, 0o600, { within: outRoot });
    await writeDirAtomic(join(outRoot, "runs", run.runHash), run.files, { within: outRoot, mode: 0o600 });
    outcome.written = true;
    const why = run.error === null ? "" : ` (${run.error.code}: ${run.error.message})`;
    const chain = run.next === undefined ? "" : ` (run ${run.next.segment - 1} of its MCP session)`;
    io.stderr(`reach-wasm mcp: session run ${run.status} ${run.runHash}${chain}${why}\nreach-wasm mcp: capsule ${capsule}${run.capsule.signed ? " (signed)" : ""}\n`);
    return capsule;
  };
}

/** The wire request of every session: the pack, the trust decision, the key; tools get the runtime's fetch. */
async function wireRequest(args: McpArgs): Promise<WireRequest> {
  const files = await readPackFiles(args.pack);
  const storeText = await readTrustStoreText(args.trust);
  const keyFileText = args.key === undefined ? undefined : new TextDecoder().decode(await readPrivateKeyFile(args.key));
  const secrets = readSecrets(args.secrets, "mcp");
  // The values stay in this process for every session run (in memory; never in a record).
  return { pack: { files }, trust: { storeText, unrestricted: args.unrestricted }, ...(keyFileText === undefined ? {} : { keyFileText }), ...(args.stepTimeoutMs === undefined ? {} : { stepTimeoutMs: args.stepTimeoutMs }), ...(Object.keys(secrets).length === 0 ? {} : { secrets }), network: true };
}

function untilAborted(signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => (signal.aborted ? resolve() : signal.addEventListener("abort", () => resolve(), { once: true })));
}

function exitCode(ended: readonly McpEnded[], outcomes: readonly Outcome[]): number {
  return ended.every((e) => e.run !== null || e.error === null) && outcomes.every((o) => o.status === "COMPLETED" && o.written) ? 0 : 1;
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
  const outcomes: Outcome[] = [];
  try {
    const written = runSink(outRoot, io, outcomes);
    // `--otlp-endpoint`: each session run's trace, once its capsule is written (the SDK loads only then)
    const otel = args.otlpEndpoint === undefined ? null : (await import("./_otel-live.ts")).liveOtel(args.otlpEndpoint, io, "mcp");
    const sink: McpRunSink = otel === null ? written : async (run) => {
      const capsule = await written(run);
      otel.exportLater(run); // in the background: the session's next answer does not wait for the collector
      return capsule;
    };
    // The first run is opened before serving: a pack that cannot run is refused at once (exit 2).
    const first = await openIsolatedSession({ ...request, session: SESSION_START }, { signal: signals.signal, inlineFirstMs: INLINE_FIRST_MS });
    const what = `pack ${first.pack.id} ${first.pack.version} (${first.pack.restricted ? "restricted" : "unrestricted"}; ${first.tools.length} tools; each run ${first.budget.maxToolCalls} calls, ${first.budget.maxExecutionTimeMs} ms)`;
    const serving = { request, sink, signal: signals.signal, say, what, onSegment: sessionIndex(outRoot) };
    const ended = args.http === null ? await serveStdio(first, serving) : await serveOnHttp(args, first, serving);
    await otel?.flush();
    reportFailures(io, ended);
    return exitCode(ended, outcomes);
  } finally {
    signals.dispose();
  }
}

/** What both faces serve with. */
type Serving = { request: WireRequest; sink: McpRunSink; signal: AbortSignal; say: (t: string) => void; what: string; onSegment: (segments: readonly McpSegment[]) => Promise<void> };

/** The engine that opens a session's runs: each on its own engine thread when a call holds this one too long. */
function runEngineOf(request: WireRequest): McpEngine {
  return { openSession: (options) => openIsolatedSession({ ...request, session: options.session }, { ...(options.signal === undefined ? {} : { signal: options.signal }), inlineFirstMs: INLINE_FIRST_MS }) };
}

/** One MCP session over stdin/stdout until stdin ends (its last run COMPLETED) or a signal (ABORTED). */
async function serveStdio(first: IsolatedSession, s: Serving): Promise<McpEnded[]> {
  const { signal } = s;
  const run = new McpSessionRun(first, s.sink, { engine: runEngineOf(s.request), signal, onSegment: s.onSegment });
  const server = createMcpServer(run, INFO);
  const transport = new BoundedStdioTransport({ input: process.stdin, output: process.stdout });
  answerMalformed(transport);
  const eof = new Promise<void>((resolve) => {
    process.stdin.once("end", resolve);
    process.stdin.once("close", resolve);
  });
  const closed = new Promise<void>((resolve) => (transport.onclose = resolve));
  await server.connect(transport);
  s.say(`serving ${s.what} over stdio; the session ends when stdin ends`);
  await Promise.race([eof, closed, untilAborted(signal)]);
  if (!signal.aborted) await run.idle(); // stdin ended: what was asked before is answered, then the run ends
  const ended = await run.end(signal.aborted);
  await run.idle(); // the calls that came before the end are answered before the transport closes
  await new Promise((resolve) => setTimeout(resolve, 0));
  await server.close();
  process.stdin.destroy(); // nothing more is read: let the process exit
  return [ended];
}

/** A refusal of the HTTP server's guards (Host, Origin, per-client limit) as MCP clients read errors: JSON-RPC. */
function jsonRpcRefusal(status: number, error: ReachError): Response {
  const headers: Record<string, string> = { "content-type": "application/json" };
  if (error.retryAfter !== null) headers["retry-after"] = String(Math.max(1, Math.ceil(error.retryAfter / 1000)));
  return new Response(JSON.stringify({ jsonrpc: "2.0", id: null, error: { code: -32000, message: `${error.code}: ${error.message}` } }), { status, headers });
}

/** Streamable HTTP until a signal: each MCP session a chain of runs; the first run opened already (the spare). */
async function serveOnHttp(args: McpArgs, first: IsolatedSession, s: Serving): Promise<McpEnded[]> {
  let spare: IsolatedSession | null = first;
  const engine = runEngineOf(s.request);
  const shared: McpEngine = {
    openSession: async (options) => {
      const opened = options.session.segment === 1 ? spare : null;
      if (opened !== null) spare = null;
      return opened ?? (await engine.openSession(options));
    },
  };
  const ended: McpEnded[] = [];
  const handler = new McpHttpHandler({
    engine: shared, sink: s.sink, info: INFO, token: args.token, signal: s.signal, budget: first.budget, scope: first.scope, onSegment: s.onSegment,
    ...(args.maxSessions === undefined ? {} : { maxSessions: args.maxSessions }),
    // on loopback every client has the same address: a share per address would be the whole server's, smaller
    ...(args.maxSessionsPerClient !== undefined ? { maxSessionsPerClient: args.maxSessionsPerClient } : isLoopback(args.http!.hostname) ? { maxSessionsPerClient: args.maxSessions ?? DEFAULT_MAX_SESSIONS } : {}),
    ...(args.idleTimeoutMs === undefined ? {} : { idleTimeoutMs: args.idleTimeoutMs }),
    onSession: (e) => {
      if (e.kind === "open") return s.say(`session ${e.id} opened (client ${e.client})`);
      ended.push(e.ended);
      s.say(`session ${e.id} ${e.expired ? `expired (no request for ${Math.round((args.idleTimeoutMs ?? DEFAULT_IDLE_TIMEOUT_MS) / 1000)} s)` : "ended"}`);
    },
  });
  const server = await serveHttp(handler.fetch, { ...args.http!, allowedHosts: args.allowedHosts, allowedOrigins: args.allowedOrigins, refusal: jsonRpcRefusal });
  s.say(`serving ${s.what} at ${server.url}${MCP_PATH}${args.token === null ? " (loopback clients only)" : " (bearer token required)"}; Ctrl-C stops it`);
  await untilAborted(s.signal);
  await handler.close(true);
  await server.close();
  if (spare !== null) await (spare as IsolatedSession).close(true).catch(() => undefined); // never used: no capsule
  return ended;
}
