/**
 * One MCP session = one session run (seed 003 §3.2 steps, arriving from an agent). {@link McpSessionRun} turns MCP's
 * requests into the engine session's calls and back: `tools/list` is the pack's tools plus the infra tools,
 * `tools/call` is one recorded step (its output as `structuredContent` and a JSON text block; a refused call as
 * `isError` with the ReachError code and message), the workspace's files are read-only resources. A hard failure ends
 * the session run: its capsule is handed to the sink at once, and every later call is answered with an error naming
 * the capsule. The engine is injected ({@link McpEngine}): the CLI hands in the engine thread, tests the engine itself.
 * @module
 */
import type { CallToolResult, ListResourcesResult, ReadResourceResult, Tool } from "@modelcontextprotocol/sdk/types.js";
import type { EngineRun } from "../engine/engine.ts";
import type { SessionCall, SessionTool, WorkspaceFile } from "../engine/session.ts";
import { ReachError, toReachError } from "../protocol/errors.ts";
import type { JsonObject, JsonValue } from "../sandbox/types.ts";
import { listPage, pathOfUri, readContents } from "./resources.ts";

/** A session run as the MCP server needs it (the engine call `openSession`, on its own thread or in process). */
export type McpEngineSession = {
  /** The pack's tools, then the infra tools. */
  readonly tools: readonly SessionTool[];
  /** The pack that runs and how far it is trusted. */
  readonly pack: EngineRun["pack"];
  /** One call, checked, executed and recorded as a step. */
  call(tool: string, args: JsonValue): Promise<SessionCall>;
  /** The workspace's regular files now (sorted by path). */
  workspace(): Promise<readonly WorkspaceFile[]> | readonly WorkspaceFile[];
  /** A copy of one workspace file's bytes, or null. */
  readWorkspace(path: string): Promise<Uint8Array | null> | Uint8Array | null;
  /** End the session (COMPLETED, or ABORTED with `aborted`) and build its capsule. */
  close(aborted?: boolean): Promise<EngineRun>;
};

/** Opens session runs (the CLI binds the pack, trust and key; `signal` aborts the run wherever it is). */
export type McpEngine = { openSession(options: { signal?: AbortSignal }): Promise<McpEngineSession> };

/** Where an ended session run goes (the CLI writes the capsule and run files); answers where the capsule is. */
export type McpRunSink = (run: EngineRun) => Promise<string>;

/** How a session run ended: the run and where its capsule went, or why there is no capsule. */
export type McpEnded = { run: EngineRun | null; capsule: string | null; error: ReachError | null };

/** An MCP tool's schemas must be objects (`type: "object"`); another schema is kept under `allOf`. */
function objectSchema(schema: JsonObject): Tool["inputSchema"] {
  return schema["type"] === "object" ? (schema as Tool["inputSchema"]) : { type: "object", allOf: [schema] };
}

/** A refused or failed call: the ReachError code and message, its error document (error.schema.json) under `_meta`. */
function errorResult(error: ReachError, note = ""): CallToolResult {
  return { isError: true, content: [{ type: "text", text: `${error.code}: ${error.message}${note}` }], _meta: { "reach-wasm/error": error.toJSON() } };
}

/** What a call after the end is told: how the run ended and where its capsule is. */
function endedNote(ended: McpEnded): string {
  if (ended.run === null) return ` — the session run ended without a capsule (${ended.error?.code ?? "EXEC_RESOURCE_UNAVAILABLE"}: ${ended.error?.message ?? "unknown"})`;
  const where = ended.capsule !== null ? `its capsule is ${ended.capsule}` : `its capsule could not be written (${ended.error?.message ?? "unknown"})`;
  return ` — the session run ended ${ended.run.status} (run hash ${ended.run.runHash}); ${where}`;
}

/**
 * The session run behind one MCP session.
 * @example
 * const run = new McpSessionRun(await engine.openSession({ signal }), async (r) => `/out/${r.capsule.name}`);
 * await run.call("wordcount", { text: "a b" }); // { content: [...], structuredContent: { words: 2, ... } }
 * const ended = await run.end(); // { run, capsule: "/out/<runHash>.capsule.tar.gz", error: null }
 */
export class McpSessionRun {
  readonly #engine: McpEngineSession;
  readonly #sink: McpRunSink;
  readonly #tools: Tool[];
  /** Engine calls not answered yet: the engine session is closed only after them. */
  readonly #inflight = new Set<Promise<unknown>>();
  /** Calls and resource reads, one at a time in arrival order (a read sees the calls before it). */
  #queue: Promise<unknown> = Promise.resolve();
  #ending: Promise<McpEnded> | null = null;

  /**
   * @param engine the engine session
   * @param sink where the ended run goes
   */
  constructor(engine: McpEngineSession, sink: McpRunSink) {
    this.#engine = engine;
    this.#sink = sink;
    this.#tools = engine.tools.map((t) => ({
      name: t.name,
      description: t.description,
      inputSchema: objectSchema(t.inputSchema),
      ...(t.outputSchema === null ? {} : { outputSchema: objectSchema(t.outputSchema) as Tool["outputSchema"] }),
    }));
  }

  /** The pack that runs. */
  get pack(): EngineRun["pack"] {
    return this.#engine.pack;
  }

  /**
   * `tools/list`: the pack's tools, then the infra tools.
   * @returns the MCP tools
   */
  tools(): Tool[] {
    return this.#tools;
  }

  /**
   * `tools/call`: one recorded step.
   * @param name the tool
   * @param args its arguments
   * @returns the output (structured and as JSON text), or `isError` with the ReachError code and message
   */
  call(name: string, args: JsonValue): Promise<CallToolResult> {
    return this.#enqueue(() => this.#call(name, args));
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

  async #call(name: string, args: JsonValue): Promise<CallToolResult> {
    if (this.#ending !== null) return errorResult(new ReachError("PROTO_SEQUENCE_ERROR", "no more calls in this MCP session"), endedNote(await this.#ending) + "; start a new MCP session");
    const pending = this.#engine.call(name, args);
    this.#inflight.add(pending);
    let answer: SessionCall;
    try {
      answer = await pending;
    } catch (err) {
      return errorResult(toReachError(err, "EXEC_RESOURCE_UNAVAILABLE"));
    } finally {
      this.#inflight.delete(pending);
    }
    if (answer.ok) return { content: [{ type: "text", text: JSON.stringify(answer.output) }], structuredContent: answer.output };
    if (!answer.ended) return errorResult(answer.error);
    return errorResult(answer.error, endedNote(await this.end()));
  }

  /**
   * `resources/list`: the workspace's files (after the end: the workspace the run ended with).
   * @param cursor the previous page's `nextCursor`
   * @returns one page of resources
   */
  listResources(cursor: string | undefined): Promise<ListResourcesResult> {
    return this.#enqueue(async () => {
      const ended = this.#ending === null ? null : await this.#ending;
      const files = ended === null ? await this.#engine.workspace() : endedWorkspace(ended);
      return listPage(files, cursor);
    });
  }

  /**
   * `resources/read`: one workspace file.
   * @param uri its `workspace:///` URI
   * @returns the contents (text or base64 blob)
   */
  readResource(uri: string): Promise<ReadResourceResult> {
    const path = pathOfUri(uri);
    return this.#enqueue(async () => {
      const ended = this.#ending === null ? null : await this.#ending;
      const bytes = ended === null ? await this.#engine.readWorkspace(path) : (ended.run?.files.get(`workspace/${path}`) ?? null);
      return readContents(uri, path, bytes);
    });
  }

  /** The end, once it began (a hard failure, a disconnect, a signal); else null. */
  get ending(): Promise<McpEnded> | null {
    return this.#ending;
  }

  /**
   * End the session run (after the calls in flight), hand the run to the sink. Idempotent: the first end decides.
   * @param aborted end it ABORTED (a signal) rather than COMPLETED
   * @returns the run and its capsule's location, or why there is none
   */
  end(aborted = false): Promise<McpEnded> {
    this.#ending ??= (async (): Promise<McpEnded> => {
      await Promise.allSettled([...this.#inflight]);
      let run: EngineRun;
      try {
        run = await this.#engine.close(aborted);
      } catch (err) {
        return { run: null, capsule: null, error: toReachError(err, "EXEC_RESOURCE_UNAVAILABLE") };
      }
      try {
        return { run, capsule: await this.#sink(run), error: null };
      } catch (err) {
        return { run, capsule: null, error: toReachError(err, "PROTO_INVALID_ARGUMENT") };
      }
    })();
    return this.#ending;
  }
}

function endedWorkspace(ended: McpEnded): WorkspaceFile[] {
  const files: WorkspaceFile[] = [];
  for (const [p, bytes] of ended.run?.files ?? []) if (p.startsWith("workspace/")) files.push({ path: p.slice("workspace/".length), size: bytes.length });
  return files.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}
