/**
 * One MCP session = a chain of session runs (conformance/HASHING.md "Session chains"). {@link McpSessionRun} turns
 * MCP's requests into the engine session's calls and back: `tools/list` is the pack's tools plus the infra tools,
 * `tools/call` is one recorded step (its output as `structuredContent` and a JSON text block), the workspace's files
 * are read-only resources.
 *
 * Refusals never end the MCP session. An unknown tool is a JSON-RPC error (-32602, as the MCP specification asks);
 * arguments that do not match the tool's input schema are a tool execution error (`isError`) and are not recorded; a
 * tool that fails or times out is an `isError` answer and the run goes on. A hard failure — a policy violation (seed
 * 003 §7.2: it terminates the run it happened in) or a spent budget — ends the current run: its capsule is handed to
 * the sink at once and the call is answered with an error naming it. The next call opens the session's next run,
 * which names the ended run's hash and starts from its workspace and memory with a fresh budget; each run's capsule
 * verifies and replays on its own. Only the end of the MCP session (the client leaves, a signal) ends it for good.
 * The engine is injected ({@link McpEngine}): the CLI hands in the engine thread, tests the engine itself.
 * @module
 */
import { ErrorCode, McpError } from "@modelcontextprotocol/sdk/types.js";
import type { CallToolResult, ListResourcesResult, ListToolsResult, ReadResourceResult, Tool } from "@modelcontextprotocol/sdk/types.js";
import type { EngineRun } from "../engine/mod.ts";
import type { SessionBudget, SessionCall, SessionScope, SessionSpent, SessionTool, WorkspaceFile } from "../engine/mod.ts";
import { SESSION_START } from "../engine/mod.ts";
import type { RunStatus, SessionChain } from "../engine/mod.ts";
import { ReachError, toReachError } from "../protocol/mod.ts";
import type { JsonObject, JsonValue } from "../protocol/mod.ts";
import { errorResult, mcpToolResult, outputResult, standing } from "./answers.ts";
import type { EndedRun, RunStanding } from "./answers.ts";
import { listPage, pathOfUri, readContents } from "./resources.ts";

/** A session run as the MCP server needs it (the engine call `openSession`, on its own thread or in process). */
export type McpEngineSession = {
  /** The pack's tools, then the infra tools. */
  readonly tools: readonly SessionTool[];
  /** The pack that runs and how far it is trusted. */
  readonly pack: EngineRun["pack"];
  /** What the run may spend. */
  readonly budget: SessionBudget;
  /** What the run's calls may reach. */
  readonly scope: SessionScope;
  /** One call, checked, executed and recorded as a step. */
  call(tool: string, args: JsonValue): Promise<SessionCall>;
  /** The workspace's regular files now (sorted by path). */
  workspace(): Promise<readonly WorkspaceFile[]> | readonly WorkspaceFile[];
  /** A copy of one workspace file's bytes, or null. */
  readWorkspace(path: string): Promise<Uint8Array | null> | Uint8Array | null;
  /** End the session run (COMPLETED, or ABORTED with `aborted`) and build its capsule. */
  close(aborted?: boolean): Promise<EngineRun>;
};

/**
 * Opens session runs (the CLI binds the pack, trust and key; `signal` aborts the run wherever it is; `session` is
 * the run's place in its MCP session — {@link SESSION_START} for the first).
 */
export type McpEngine = { openSession(options: { signal?: AbortSignal; session: SessionChain }): Promise<McpEngineSession> };

/** Where an ended session run goes (the CLI writes the capsule and run files); answers where the capsule is. */
export type McpRunSink = (run: EngineRun) => Promise<string>;

/** How a session run ended: the run and where its capsule went, or why there is no capsule. */
export type McpEnded = { run: EngineRun | null; capsule: string | null; error: ReachError | null };

/** One run of an MCP session as it ended (what the session keeps of each: no capsule bytes). */
export type McpSegment = { segment: number; runHash: string | null; previousRunHash: string | null; status: RunStatus | null; capsule: string | null; error: ReachError | null };

/** How a {@link McpSessionRun} opens its later runs and reports its ended ones. */
export type McpSessionOptions = {
  /** Opens the session's later runs. */
  engine: McpEngine;
  /** Aborts every run of the session (a signal): the session then ends for good. */
  signal?: AbortSignal;
  /** Told after each run of the session ended and went to the sink (every run so far, first first). */
  onSegment?: (segments: readonly McpSegment[]) => void | Promise<void>;
};

/** An MCP tool's schemas must be objects (`type: "object"`); another schema is kept under `allOf`. */
function objectSchema(schema: JsonObject): Tool["inputSchema"] {
  return schema["type"] === "object" ? (schema as Tool["inputSchema"]) : { type: "object", allOf: [schema] };
}

const NO_SPENDING: SessionSpent = { toolCalls: 0, executionTimeMs: 0 };

/**
 * The chain of session runs behind one MCP session (see the module notes).
 * @example
 * const first = await engine.openSession({ session: SESSION_START });
 * const run = new McpSessionRun(first, async (r) => `/out/${r.capsule.name}`, { engine });
 * await run.call("wordcount", { text: "a b" }); // { content: [...], structuredContent: { words: 2, ... } }
 * const ended = await run.end(); // { run, capsule: "/out/<runHash>.capsule.tar.gz", error: null }
 */
export class McpSessionRun {
  readonly #sink: McpRunSink;
  readonly #options: McpSessionOptions;
  readonly #tools: Tool[];
  readonly #names: ReadonlySet<string>;
  readonly #pack: EngineRun["pack"];
  readonly #budget: SessionBudget;
  readonly #scope: SessionScope;
  /** The run taking calls, or null after it ended (the next call opens the next one). */
  #current: McpEngineSession | null;
  /** The chain link the current (or last) run started from. */
  #chain: SessionChain = SESSION_START;
  /** A run being opened or closed: the end of the session waits for it. */
  #busy: Promise<unknown> | null = null;
  #spent: SessionSpent = NO_SPENDING;
  /** The last run that ended (its files answer resources until the next run opens; its `next` starts that run). */
  #last: McpEnded | null = null;
  readonly #segments: McpSegment[] = [];
  /** Engine calls not answered yet: a run is closed only after them. */
  readonly #inflight = new Set<Promise<unknown>>();
  /** Calls and resource reads, one at a time in arrival order (a read sees the calls before it). */
  #queue: Promise<unknown> = Promise.resolve();
  /** The tools of MCP servers, whose answers pass the server's result through. */
  readonly #passThrough: ReadonlySet<string>;
  #ending: Promise<McpEnded> | null = null;

  /**
   * @param first the session's first run (opened with {@link SESSION_START})
   * @param sink where each ended run goes
   * @param options how later runs are opened and ended ones reported
   */
  constructor(first: McpEngineSession, sink: McpRunSink, options: McpSessionOptions) {
    this.#current = first;
    this.#sink = sink;
    this.#options = options;
    this.#pack = first.pack;
    this.#budget = first.budget;
    this.#scope = first.scope;
    this.#passThrough = new Set(first.tools.filter((t) => t.kind === "mcp").map((t) => t.name));
    this.#tools = first.tools.map((t) => ({
      name: t.name,
      description: t.kind === "mcp" ? `${t.description} (An MCP server's tool, recorded, not contained: it runs outside reach-wasm's sandbox.)` : t.description,
      inputSchema: objectSchema(t.inputSchema),
      ...(t.outputSchema === null ? {} : { outputSchema: objectSchema(t.outputSchema) as Tool["outputSchema"] }),
    }));
    this.#names = new Set(this.#tools.map((t) => t.name));
  }

  /** The pack that runs. */
  get pack(): EngineRun["pack"] {
    return this.#pack;
  }

  /** What each run of the session may spend. */
  get budget(): SessionBudget {
    return this.#budget;
  }

  /** What the session's calls may reach. */
  get scope(): SessionScope {
    return this.#scope;
  }

  /** Every run of the session that ended so far, first first. */
  get segments(): readonly McpSegment[] {
    return this.#segments;
  }

  /** The run calls go to now (the next one when the last ended) and what it may still spend. */
  #standing(): RunStanding {
    return standing(this.#current === null && this.#last !== null ? this.#nextChain().segment : this.#chain.segment, this.#budget, this.#current === null ? NO_SPENDING : this.#spent);
  }

  /**
   * `tools/list`: the pack's tools, then the infra tools; `_meta["reach-wasm/run"]` says what the current run may
   * still spend.
   * @returns the MCP tools
   */
  tools(): ListToolsResult {
    return { tools: this.#tools, _meta: { "reach-wasm/run": this.#standing() } };
  }

  /**
   * `tools/call`: one recorded step (see the module notes).
   * @param name the tool
   * @param args its arguments
   * @param signal the request's cancellation (`notifications/cancelled`): a call cancelled while it waits its turn
   *   behind earlier calls never runs — nothing is recorded, no budget is spent (one already running goes on)
   * @returns the output (structured and as JSON text), or `isError` with the ReachError code, message and what to do
   * @throws McpError `-32602` for a tool that is not in `tools/list` (nothing runs or is recorded)
   */
  call(name: string, args: JsonValue, signal?: AbortSignal): Promise<CallToolResult> {
    if (!this.#names.has(name)) {
      const shown = JSON.stringify(name.length > 100 ? `${name.slice(0, 100)}…` : name);
      const names = [...this.#names];
      const listed = names.length > 30 ? `${names.slice(0, 30).join(", ")}, … ${names.length - 30} more` : names.join(", ");
      return Promise.reject(new McpError(ErrorCode.InvalidParams, `Unknown tool: ${shown} is not one of this server's tools (${listed}); call tools/list and use one of them. Nothing ran, nothing was recorded, no budget was spent.`));
    }
    return this.#enqueue(async () => (signal?.aborted === true ? errorResult(cancelled(name), this.#standing()) : await this.#call(name, args)));
  }

  #enqueue<T>(task: () => Promise<T>): Promise<T> {
    const next = this.#queue.then(task);
    this.#queue = next.catch(() => undefined);
    return next;
  }

  /**
   * Wait until every call and read that arrived so far has been answered.
   * @returns nothing
   */
  async idle(): Promise<void> {
    let seen: Promise<unknown>;
    do {
      seen = this.#queue;
      await seen;
    } while (seen !== this.#queue);
  }

  get #stopping(): boolean {
    return this.#options.signal?.aborted === true;
  }

  async #call(name: string, args: JsonValue): Promise<CallToolResult> {
    if (this.#ending !== null || (this.#current === null && this.#stopping)) {
      return errorResult(new ReachError("PROTO_SEQUENCE_ERROR", "this MCP session has ended (the client closed it or the server is stopping); start a new MCP session"), null);
    }
    let session: McpEngineSession;
    try {
      session = this.#current ?? (await this.#openNext());
    } catch (err) {
      return errorResult(toReachError(err, "EXEC_RESOURCE_UNAVAILABLE"), this.#standing());
    }
    if (this.#ending !== null) return errorResult(new ReachError("PROTO_SEQUENCE_ERROR", "this MCP session has ended (the client closed it or the server is stopping); start a new MCP session"), null);
    const pending = session.call(name, args);
    this.#inflight.add(pending);
    let answer: SessionCall;
    try {
      answer = await pending;
    } catch (err) {
      // The engine could not answer (its thread failed): the run cannot go on; close what can be closed.
      const ended = await this.#closeCurrent(this.#stopping);
      return errorResult(toReachError(err, "EXEC_RESOURCE_UNAVAILABLE"), this.#standing(), ended, !this.#stopping);
    } finally {
      this.#inflight.delete(pending);
    }
    this.#spent = answer.spent;
    if (answer.ok) return this.#passThrough.has(name) ? mcpToolResult(answer.output, this.#standing()) : outputResult(answer.output, this.#standing());
    if (!answer.ended) return errorResult(answer.error, this.#standing());
    const stopping = this.#stopping || answer.error.code === "EXEC_ABORTED";
    const ended = await this.#closeCurrent(stopping);
    return errorResult(answer.error, this.#standing(), ended, !stopping, this.#scope);
  }

  /** The chain link the next run starts from: the last run's `next`, or a new chain when that run was lost. */
  #nextChain(): SessionChain {
    return this.#last?.run?.next ?? SESSION_START;
  }

  /** Run `task` as the session's one open or close at a time (the end of the session waits for it). */
  async #exclusive<T>(task: () => Promise<T>): Promise<T> {
    const run = task();
    this.#busy = run;
    try {
      return await run;
    } finally {
      if (this.#busy === run) this.#busy = null;
    }
  }

  #openNext(): Promise<McpEngineSession> {
    return this.#exclusive(async () => {
      const chain = this.#nextChain();
      const { signal } = this.#options;
      const session = await this.#options.engine.openSession({ session: chain, ...(signal === undefined ? {} : { signal }) });
      this.#current = session;
      this.#chain = chain;
      this.#spent = NO_SPENDING;
      this.#last = null;
      return session;
    });
  }

  /** Close the current run (after the calls in flight), hand it to the sink, remember it. */
  #closeCurrent(aborted: boolean): Promise<EndedRun> {
    const session = this.#current!;
    this.#current = null;
    return this.#exclusive(() => this.#close(session, aborted));
  }

  async #close(session: McpEngineSession, aborted: boolean): Promise<EndedRun> {
    await Promise.allSettled([...this.#inflight]);
    let ended: McpEnded;
    try {
      const run = await session.close(aborted);
      try {
        ended = { run, capsule: await this.#sink(run), error: null };
      } catch (err) {
        ended = { run, capsule: null, error: toReachError(err, "PROTO_INVALID_ARGUMENT") };
      }
    } catch (err) {
      ended = { run: null, capsule: null, error: toReachError(err, "EXEC_RESOURCE_UNAVAILABLE") };
    }
    this.#last = ended;
    const { run } = ended;
    const { segment, previousRunHash } = this.#chain;
    this.#segments.push({ segment, runHash: run?.runHash ?? null, previousRunHash, status: run?.status ?? null, capsule: ended.capsule, error: ended.error ?? run?.error ?? null });
    try {
      await this.#options.onSegment?.(this.#segments);
    } catch {
      // the session index is a convenience: its failure never stops the session
    }
    return { segment, runHash: run?.runHash ?? null, status: run?.status ?? null, capsule: ended.capsule, problem: ended.error === null ? null : `${ended.error.code}: ${ended.error.message}` };
  }

  /**
   * `resources/list`: the workspace's files (after a run ended and before the next opens: the workspace it ended with).
   * @param cursor the previous page's `nextCursor`
   * @returns one page of resources
   */
  listResources(cursor: string | undefined): Promise<ListResourcesResult> {
    return this.#enqueue(async () => listPage(this.#current !== null ? await this.#current.workspace() : endedWorkspace(this.#last), cursor));
  }

  /**
   * `resources/read`: one workspace file.
   * @param uri its `workspace:///` URI
   * @returns the contents (text or base64 blob)
   */
  readResource(uri: string): Promise<ReadResourceResult> {
    const path = pathOfUri(uri);
    return this.#enqueue(async () => {
      const bytes = this.#current !== null ? await this.#current.readWorkspace(path) : (this.#last?.run?.files.get(`workspace/${path}`) ?? null);
      return readContents(uri, path, bytes);
    });
  }

  /** The end of the MCP session, once it began (a disconnect, a signal); else null. */
  get ending(): Promise<McpEnded> | null {
    return this.#ending;
  }

  /**
   * End the MCP session: the run in progress (after the calls in flight) ends COMPLETED, or ABORTED with `aborted`,
   * and goes to the sink. Idempotent: the first end decides. When no run is in progress (the last one ended by a
   * failure and no call came since), nothing more is written.
   * @param aborted end it ABORTED (a signal) rather than COMPLETED
   * @returns the last run and its capsule's location, or why there is none
   */
  end(aborted = false): Promise<McpEnded> {
    this.#ending ??= (async (): Promise<McpEnded> => {
      await Promise.allSettled([...this.#inflight]);
      while (this.#busy !== null) await this.#busy.catch(() => undefined);
      if (this.#current !== null) await this.#closeCurrent(aborted);
      return this.#last ?? { run: null, capsule: null, error: null };
    })();
    return this.#ending;
  }
}

/** The answer to a call the client cancelled before it ran (the SDK sends no answer to a cancelled request). */
function cancelled(name: string): ReachError {
  return new ReachError("EXEC_ABORTED", `the call to "${name}" was cancelled (notifications/cancelled) before it ran: nothing ran, nothing was recorded, no budget was spent`, { recoverable: true });
}

function endedWorkspace(ended: McpEnded | null): WorkspaceFile[] {
  const files: WorkspaceFile[] = [];
  for (const [p, bytes] of ended?.run?.files ?? []) if (p.startsWith("workspace/")) files.push({ path: p.slice("workspace/".length), size: bytes.length });
  return files.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}
