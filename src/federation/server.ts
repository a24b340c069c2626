/**
 * The HTTP face of a federation node (seed 003 §6), on Hono so that it runs unchanged on Node and Deno
 * (`serveHttp` in `src/platform/http-server.ts` serves it). Two routes:
 *
 * - `POST /federation/v1/messages`: one signed envelope in (`message.ts`), one signed envelope out, with
 *   `inReplyTo` set to the request's nonce. `run.request` → `run.result`; `revocation.push` → `revocation.ack`;
 *   `revocation.pull` → `revocation.list`; any refusal → `error` whose body is the upstream error document
 *   (`error.schema.json`, with `context.nodeId`) and an HTTP status
 *   (400 malformed, 401 unsigned / unregistered / bad signature, 403 delegation, trust or policy, 409 replayed or
 *   stale, 413 too large, 422 pack).
 * - `GET /federation/v1/node`: this node's public identity (`node.json`), for operators and health checks.
 *
 * The registry is read from the node directory on every request and revocations are looked up by (revoker,
 * delegation) in it (`revocation-store.ts`), so `node trust`, `node forget` and `revoke` take effect on a running node
 * at once, and what a message costs does not grow with the revocations kept. A pushed revocation is kept only when its
 * signer is registered, its signature verifies and, when this node knows the delegation, the signer is entitled to
 * revoke it (its delegator or the delegator of a link above it); otherwise the whole push is refused with that code
 * and nothing is kept. One node's revocations are kept up to `NodeState.revocationLimit`; beyond it its pushes are
 * refused with `POLICY_RATE_LIMIT_EXCEEDED` (HTTP 429) and every other node's still land.
 * @module
 */
import { Hono } from "hono";
import type { Context } from "hono";
import { bodyLimit } from "hono/body-limit";
import { ReachError, toReachError } from "../protocol/mod.ts";
import type { ErrorCode } from "../protocol/mod.ts";
import type { EngineHost } from "./engine-adapter.ts";
import type { NodeSelf } from "./identity.ts";
import { MESSAGES_PATH, NODE_PATH, openMessage, signMessage } from "./message.ts";
import type { Message, MessageType } from "./message.ts";
import type { NonceBook } from "./nonces.ts";
import { checkRevocation, MAX_RELAYED_PER_NODE, MAX_REVOCATIONS_PER_MESSAGE, parseRevocation } from "./revocation.ts";
import type { Revocation } from "./revocation.ts";
import { limitError } from "./revocation-store.ts";
import { executeRunRequest, MAX_PACK_ARCHIVE_BYTES } from "./run-request.ts";
import type { NodeState } from "./state.ts";

/** The largest request body (a run request carries the pack in base64). */
export const MAX_REQUEST_BYTES = Math.ceil(MAX_PACK_ARCHIVE_BYTES / 3) * 4 + 4 * 1024 * 1024;

const NIL_UUID = "00000000-0000-0000-0000-000000000000";

/** What a serving node needs. */
export type NodeServerOptions = {
  state: NodeState;
  self: NodeSelf;
  /** The wall clock (ms since the epoch), injected by the platform. */
  now: () => number;
  /** Seen nonces; persisted through `state` after every accepted message. */
  nonces: NonceBook;
  host: EngineHost;
  /** One line per event, for stderr. */
  log?: (line: string) => void;
};

/** A node's current view: the registry, read fresh (revocations are looked up in `state.revocationStore`). */
export type NodeView = { keyOf(nodeId: string): string | undefined };

/**
 * Read the registry of a node directory.
 * @param state the node directory
 * @param self this node (its own key is part of the view)
 * @returns the key lookup for message and chain checks
 * @throws ReachError for a damaged `peers.json`
 * @example const view = await nodeView(state, self);
 */
export async function nodeView(state: NodeState, self: NodeSelf): Promise<NodeView> {
  const keys = new Map((await state.peers()).map((p) => [p.nodeId, p.publicKey]));
  keys.set(self.identity.nodeId, self.identity.publicKey);
  return { keyOf: (id) => keys.get(id) };
}

const STATUS: ReadonlyArray<[RegExp, number]> = [
  [/^FED_(SIGNATURE_MISSING|SIGNATURE_INVALID|NODE_UNAUTHORIZED)$/, 401],
  [/^FED_(MESSAGE_REPLAYED|MESSAGE_STALE)$/, 409],
  [/^POLICY_RATE_LIMIT_EXCEEDED$/, 429],
  [/^(FED_|POLICY_)/, 403],
  [/^PACK_/, 422],
  [/^PROTO_/, 400],
];

function statusOf(code: ErrorCode): number {
  return STATUS.find(([re]) => re.test(code))?.[1] ?? 500;
}

function claimed(value: unknown, key: "from" | "nonce"): string | undefined {
  const v = value !== null && typeof value === "object" ? (value as Record<string, unknown>)[key] : undefined;
  const re = key === "from" ? /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/ : /^[0-9a-f]{32}$/;
  return typeof v === "string" && re.test(v) ? v : undefined;
}

async function readJson(c: Context): Promise<unknown> {
  try {
    return JSON.parse(await c.req.text());
  } catch {
    throw new ReachError("PROTO_INVALID_MESSAGE", "the request body is not JSON; send one signed federation envelope");
  }
}

/** Check a push whole (signature, entitlement, limits) before keeping any of it. */
async function checkPush(opts: NodeServerOptions, view: NodeView, list: unknown): Promise<Revocation[]> {
  if (!Array.isArray(list) || list.length > MAX_REVOCATIONS_PER_MESSAGE) throw new ReachError("PROTO_INVALID_MESSAGE", `revocations must be a list of at most ${MAX_REVOCATIONS_PER_MESSAGE}`);
  const store = opts.state.revocationStore;
  const limit = opts.state.revocationLimit;
  const fresh = new Map<string, Revocation>();
  const bySigner = new Map<string, number>();
  for (const [i, raw] of list.entries()) {
    const r = parseRevocation(raw, `revocations[${i}]`);
    const key = `${r.delegator}/${r.delegationId}`;
    if (fresh.has(key) || (await store.has(r.delegator, r.delegationId))) continue; // kept already: nothing to do
    const n = (bySigner.get(r.delegator) ?? 0) + 1;
    if (r.delegator !== opts.self.identity.nodeId) {
      // before the signature: a signer at its limit costs this node one lookup per revocation, no more
      const room = await store.room(r.delegator, limit);
      if (n > room) throw limitError(r.delegator, limit - room, limit);
    }
    await checkRevocation(r, view.keyOf, (id) => opts.state.delegation(id));
    fresh.set(key, r);
    bySigner.set(r.delegator, n);
  }
  return [...fresh.values()];
}

async function acceptRevocations(opts: NodeServerOptions, view: NodeView, list: unknown): Promise<{ accepted: number; ignored: number }> {
  const fresh = await checkPush(opts, view, list);
  const self = opts.self.identity.nodeId;
  let accepted = 0;
  for (const r of fresh) {
    if (await opts.state.revocationStore.add(r, r.delegator === self ? null : opts.state.revocationLimit)) {
      accepted++;
      opts.log?.(`revocation of delegation ${r.delegationId} by ${r.delegator} recorded`);
    }
  }
  return { accepted, ignored: (list as unknown[]).length - accepted };
}

async function dispatch(opts: NodeServerOptions, view: NodeView, msg: Message): Promise<[MessageType, Record<string, unknown>]> {
  switch (msg.type) {
    case "run.request": {
      opts.log?.(`run request from ${msg.from}`);
      const isRevoked = await opts.state.revocationStore.revokedIn(msg.body["chain"]);
      const body = await executeRunRequest({ self: opts.self, host: opts.host, now: opts.now(), keyOf: view.keyOf, isRevoked }, msg);
      opts.log?.(`run ${String(body["runHash"])} ${String(body["status"])} for ${msg.from}`);
      return ["run.result", body];
    }
    case "revocation.push":
      return ["revocation.ack", await acceptRevocations(opts, view, msg.body["revocations"])];
    case "revocation.pull":
      return ["revocation.list", { revocations: await opts.state.revocationStore.list(opts.self.identity.nodeId, MAX_REVOCATIONS_PER_MESSAGE, MAX_RELAYED_PER_NODE) }];
    default:
      throw new ReachError("PROTO_INVALID_MESSAGE", `a node does not accept "${msg.type}" messages; send run.request, revocation.push or revocation.pull`);
  }
}

/**
 * The Hono app of a federation node.
 * @param opts node directory, identity, clock, nonces and engine
 * @returns the app (serve `app.fetch`)
 * @throws never (every refusal becomes a signed `error` reply)
 * @example const server = await serveHttp(createNodeApp(opts).fetch, { hostname: "127.0.0.1", port: 8443, tls });
 */
export function createNodeApp(opts: NodeServerOptions): Hono {
  const app = new Hono();
  const self = opts.self.identity.nodeId;
  let saving: Promise<void> = Promise.resolve();
  const reply = (c: Context, status: number, type: MessageType, to: string, inReplyTo: string | undefined, body: Record<string, unknown>): Response => {
    const msg = signMessage({ type, from: self, to, body, ...(inReplyTo === undefined ? {} : { inReplyTo }) }, opts.self.keys.privateKey, opts.now());
    return c.json(msg, status as 200);
  };
  const fail = (c: Context, err: unknown, raw: unknown, status?: number): Response => {
    const e = toReachError(err, "EXEC_TOOL_FAILED");
    const known = err instanceof ReachError;
    opts.log?.(`refused ${claimed(raw, "from") ?? "an unknown sender"}: ${e.code}: ${e.message}`);
    const shown = known ? e : new ReachError("EXEC_RESOURCE_UNAVAILABLE", "the node failed while handling the request; see its log", { retryAfter: 1000 });
    return reply(c, status ?? (known ? statusOf(e.code) : 500), "error", claimed(raw, "from") ?? NIL_UUID, claimed(raw, "nonce"), { ...shown.toJSON(), context: { nodeId: self } });
  };
  app.notFound((c) => {
    const path = new URL(c.req.url).pathname;
    const allowed = path === MESSAGES_PATH ? "POST" : path === NODE_PATH ? "GET" : null;
    if (allowed === null) return fail(c, new ReachError("PROTO_INVALID_ARGUMENT", `no route ${c.req.method} ${path}; a node answers POST ${MESSAGES_PATH} and GET ${NODE_PATH}`), undefined, 404);
    c.header("allow", allowed);
    return fail(c, new ReachError("PROTO_INVALID_ARGUMENT", `${path} takes ${allowed}, not ${c.req.method}`), undefined, 405);
  });
  app.onError((err, c) => fail(c, err, undefined));
  app.get(NODE_PATH, (c) => c.json(opts.self.identity));
  app.post(
    MESSAGES_PATH,
    bodyLimit({ maxSize: MAX_REQUEST_BYTES, onError: (c) => fail(c, new ReachError("PROTO_INVALID_MESSAGE", `the request is larger than ${MAX_REQUEST_BYTES} bytes`), undefined, 413) }),
    async (c) => {
      let raw: unknown;
      try {
        raw = await readJson(c);
        const view = await nodeView(opts.state, opts.self);
        const msg = openMessage(raw, { self, now: opts.now(), keyOf: view.keyOf, nonces: opts.nonces });
        // the in-memory book refuses replays at once; the saved copy (for restarts) follows without delaying the reply
        const book = opts.nonces.toJSON();
        saving = saving.then(() => opts.state.saveNonces(book)).catch((err: unknown) => opts.log?.(`cannot save nonces: ${(err as Error).message}`));
        const [type, body] = await dispatch(opts, view, msg);
        return reply(c, 200, type, msg.from, msg.nonce, body);
      } catch (err) {
        return fail(c, err, raw);
      }
    },
  );
  return app;
}
