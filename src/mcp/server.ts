/**
 * The MCP server of one session (the SDK's low-level `Server`: the pack's tools carry JSON Schemas, not zod): `tools`
 * and `resources` capabilities answered by a {@link McpSessionRun}. Any transport can carry it — stdio, or one
 * Streamable HTTP session (`http.ts`).
 * @module
 */
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import {
  CallToolRequestSchema,
  ErrorCode,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListToolsRequestSchema,
  McpError,
  ReadResourceRequestSchema,
} from "@modelcontextprotocol/sdk/types.js";
import type { ServerResult } from "@modelcontextprotocol/sdk/types.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import { z } from "zod";
import type { JsonValue } from "../protocol/mod.ts";
import type { SessionBudget, SessionScope } from "../engine/mod.ts";
import { instructions } from "./answers.ts";
import type { McpSessionRun } from "./session-run.ts";

/** The server's name and version in `initialize` (the CLI's version). */
export type McpServerInfo = { name: string; version: string };

/** What the server says in `initialize` besides its name: the runs' budget and scope, for its instructions. */
export type McpServerOptions = { budget?: SessionBudget | null; scope?: SessionScope | null };

/**
 * An MCP server answering from a session run. The run may still be opening (HTTP opens it at `initialize`): each
 * request waits for it, and a run that could not open answers every request with an error.
 * @param run the session run, or a promise of it
 * @param info the name and version `initialize` reports
 * @param options the runs' budget and scope, for the instructions (default: the run's own, when it is open already)
 * @returns the server (connect it to a transport)
 * @example
 * const server = createMcpServer(run, { name: "reach-wasm", version: "0.1.0" });
 * await server.connect(transport);
 */
export function createMcpServer(run: McpSessionRun | Promise<McpSessionRun>, info: McpServerInfo, options: McpServerOptions = {}): Server {
  const ready = Promise.resolve(run);
  ready.catch(() => undefined);
  const session = async (): Promise<McpSessionRun> => {
    try {
      return await ready;
    } catch (err) {
      throw new McpError(ErrorCode.InternalError, `the session run could not start: ${(err as Error).message}; end this MCP session and start another`);
    }
  };
  const server = new Server(info, {
    capabilities: { tools: { listChanged: false }, resources: { listChanged: false, subscribe: false } },
    instructions: instructions(options.budget ?? (run instanceof Promise ? null : run.budget), options.scope ?? (run instanceof Promise ? null : run.scope)),
  });
  onRequest(server, ListToolsRequestSchema, async () => (await session()).tools());
  // The arguments as received, once the schema accepted them: its record would drop a "__proto__" member, which the
  // tool must see as the capsule records it (conformance/HASHING.md "What a tool sees").
  onRequest(server, CallToolRequestSchema, async (request, raw, extra) => (await session()).call(request.params.name, ((raw.params as { arguments?: unknown }).arguments ?? {}) as JsonValue, extra.signal));
  onRequest(server, ListResourcesRequestSchema, async (request) => (await session()).listResources(request.params?.cursor));
  onRequest(server, ListResourceTemplatesRequestSchema, () => ({ resourceTemplates: [] }));
  onRequest(server, ReadResourceRequestSchema, async (request) => (await session()).readResource(request.params.uri));
  return server;
}

type RequestSchema = z.ZodObject<{ method: z.ZodLiteral<string>; params: z.ZodType }>;

/**
 * A request handler whose parameters are checked here, so that bad ones are `-32602 Invalid params` naming the
 * problem (the SDK's own check of a handler's schema answers `-32603 Internal error`).
 */
function onRequest<S extends RequestSchema>(server: Server, schema: S, handler: (request: z.output<S>, raw: { params?: unknown }, extra: { signal: AbortSignal }) => ServerResult | Promise<ServerResult>): void {
  const method = schema.shape.method.value;
  server.setRequestHandler(schema.extend({ params: z.unknown().optional() }), async (request, extra) => {
    const parsed = schema.safeParse(request);
    if (!parsed.success) throw new McpError(ErrorCode.InvalidParams, `invalid ${method} params: ${z.prettifyError(parsed.error).replace(/\n/g, "; ")}`);
    return await handler(parsed.data, request, extra);
  });
}

/**
 * Answer what a transport could not read — a line that is not JSON (`-32700`), JSON that is not a JSON-RPC message
 * (`-32600`) — with a JSON-RPC error (id null), instead of dropping it silently (the SDK's stdio transport only reports
 * it). Call before `server.connect(transport)`; other transport errors are left alone.
 * @param transport the transport (its `onerror` is set)
 * @returns nothing
 * @example answerMalformed(transport); await server.connect(transport);
 */
export function answerMalformed(transport: Transport): void {
  transport.onerror = (error: Error) => {
    const code = error instanceof SyntaxError ? ErrorCode.ParseError : error.name === "ZodError" ? ErrorCode.InvalidRequest : null;
    if (code === null) return;
    const message = code === ErrorCode.ParseError ? "Parse error: a message is one line of JSON" : "Invalid Request: not a JSON-RPC 2.0 request, notification or response";
    // id null (JSON-RPC 2.0 §5: the id could not be read); the SDK's own HTTP transport answers the same way
    transport.send({ jsonrpc: "2.0", id: null, error: { code, message } } as never).catch(() => undefined);
  };
}
