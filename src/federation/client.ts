/**
 * Talking to a peer: one signed envelope out, one signed envelope back, verified against the peer's registered key
 * and bound to the request by `inReplyTo` (so an old reply cannot be replayed to us). The transport is an injected
 * `fetch` (the CLI's trusts `--ca` certificates); plain `http:` goes only to loopback endpoints.
 * @module
 */
import type { NodeIdentity } from "../protocol/mod.ts";
import { isErrorCode, ReachError } from "../protocol/mod.ts";
import type { NodeSelf } from "./identity.ts";
import { isLoopbackHost } from "./identity.ts";
import { MESSAGES_PATH, openMessage, signMessage } from "./message.ts";
import type { Message, MessageType } from "./message.ts";
import { concatBytes } from "../canonical/mod.ts";

/** The transport: a `fetch` restricted to what nodes need. */
export type PeerFetch = (url: string, init: { method: "POST"; headers: Record<string, string>; body: Uint8Array<ArrayBuffer>; signal?: AbortSignal }) => Promise<Response>;

/** What a node needs to talk to its peers. */
export type ClientContext = { self: NodeSelf; now: () => number; fetch: PeerFetch };

/** How long a node may take to answer a revocation push or pull (ms). */
export const EXCHANGE_TIMEOUT_MS = 20_000;
/** How long a delegate may take to run a pack and answer (ms). */
export const RUN_TIMEOUT_MS = 30 * 60_000;
/** The largest reply read (a run result carries the capsule and the run files in base64). */
export const MAX_REPLY_BYTES = 512 * 1024 * 1024;

const enc = new TextEncoder();

/**
 * Read a response body up to a limit.
 * @param res the response
 * @param maxBytes the limit
 * @returns the bytes
 * @throws ReachError `FED_TRUST_VIOLATION` when the body is larger
 * @example const bytes = await readLimited(res, 1024);
 */
export async function readLimited(res: Response, maxBytes: number): Promise<Uint8Array> {
  const reader = res.body?.getReader();
  if (reader === undefined) return new Uint8Array();
  const parts: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.length;
    if (total > maxBytes) {
      await reader.cancel();
      throw new ReachError("FED_TRUST_VIOLATION", `the peer's reply is larger than ${maxBytes} bytes; refused`);
    }
    parts.push(value);
  }
  return concatBytes(parts, total);
}

function assertTransport(endpoint: string): void {
  const url = new URL(endpoint);
  if (url.protocol !== "https:" && !(url.protocol === "http:" && isLoopbackHost(url.hostname))) {
    throw new ReachError("FED_TRUST_VIOLATION", `endpoint ${endpoint} is neither https:// nor a loopback http:// address; federation messages travel over TLS`);
  }
}

/**
 * Post an envelope to a node and parse the JSON that comes back (no verification: see {@link exchange}).
 * @param fetch the transport
 * @param endpoint the node's endpoint
 * @param msg the signed envelope (or anything, for tests of refusals)
 * @param timeoutMs how long to wait for the whole reply
 * @param maxBytes the reply limit
 * @returns the HTTP status and the parsed reply
 * @throws ReachError `FED_NODE_UNREACHABLE` when the node cannot be reached, does not answer in time or not in JSON
 * @example const { status, value } = await postEnvelope(fetch, peer.endpoint, msg);
 */
export async function postEnvelope(fetch: PeerFetch, endpoint: string, msg: unknown, timeoutMs = EXCHANGE_TIMEOUT_MS, maxBytes = MAX_REPLY_BYTES): Promise<{ status: number; value: unknown }> {
  assertTransport(endpoint);
  const signal = AbortSignal.timeout(timeoutMs);
  const unreachable = (err: unknown): ReachError =>
    signal.aborted
      ? new ReachError("FED_NODE_UNREACHABLE", `the node at ${endpoint} did not answer within ${timeoutMs / 1000} s`, { retryAfter: 5000, cause: err })
      : new ReachError("FED_NODE_UNREACHABLE", `cannot reach the node at ${endpoint} (${(err as Error).message}); check that it is serving, the address, and its TLS certificate (--ca)`, { retryAfter: 5000, cause: err });
  let res: Response;
  let bytes: Uint8Array;
  try {
    res = await fetch(`${endpoint}${MESSAGES_PATH}`, { method: "POST", headers: { "content-type": "application/json" }, body: enc.encode(JSON.stringify(msg)), signal });
    bytes = await readLimited(res, maxBytes);
  } catch (err) {
    throw err instanceof ReachError ? err : unreachable(err);
  }
  try {
    return { status: res.status, value: JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(bytes)) };
  } catch {
    throw new ReachError("FED_NODE_UNREACHABLE", `the server at ${endpoint} answered HTTP ${res.status} without a federation envelope; is it a reach-wasm node?`, { retryAfter: 5000 });
  }
}

function remoteError(reply: Message, peer: NodeIdentity): ReachError {
  const e = (reply.body["error"] ?? {}) as { code?: unknown; message?: unknown; details?: unknown; retryAfter?: unknown };
  const code = isErrorCode(e.code) ? e.code : "PROTO_INVALID_MESSAGE";
  const message = typeof e.message === "string" && e.message.length > 0 ? e.message : "refused without a message";
  const details = e.details !== null && typeof e.details === "object" ? (e.details as Record<string, unknown>) : {};
  const retryAfter = typeof e.retryAfter === "number" && Number.isSafeInteger(e.retryAfter) && e.retryAfter >= 0 ? e.retryAfter : null;
  return new ReachError(code, `node ${peer.nodeId} refused: ${message}`, { details: { ...details, node: peer.nodeId }, retryAfter });
}

/**
 * Send one message to a peer and return its verified reply.
 * @param ctx this node, its clock and transport
 * @param peer the registered peer
 * @param type the request type
 * @param body the request body
 * @param expect the reply type expected
 * @param timeoutMs how long to wait for the reply
 * @returns the reply envelope (signed by `peer`, addressed to us, in reply to our nonce)
 * @throws ReachError the peer's refusal with its code; `FED_NODE_UNREACHABLE`; `FED_SIGNATURE_*` /
 *   `FED_TRUST_VIOLATION` / `FED_MESSAGE_STALE` for a reply that does not authenticate
 * @example const reply = await exchange(ctx, peer, "revocation.pull", {}, "revocation.list");
 */
export async function exchange(ctx: ClientContext, peer: NodeIdentity, type: MessageType, body: Record<string, unknown>, expect: MessageType, timeoutMs = EXCHANGE_TIMEOUT_MS): Promise<Message> {
  const self = ctx.self.identity.nodeId;
  const msg = signMessage({ type, from: self, to: peer.nodeId, body }, ctx.self.keys.privateKey, ctx.now());
  const { value } = await postEnvelope(ctx.fetch, peer.endpoint, msg, timeoutMs);
  const reply = openMessage(value, { self, now: ctx.now(), keyOf: (id) => (id === peer.nodeId ? peer.publicKey : undefined) });
  if (reply.inReplyTo !== msg.nonce) throw new ReachError("FED_TRUST_VIOLATION", `node ${peer.nodeId} replied to another message (inReplyTo ${String(reply.inReplyTo)}, sent ${msg.nonce}); refused`);
  if (reply.type === "error") throw remoteError(reply, peer);
  if (reply.type !== expect) throw new ReachError("PROTO_INVALID_MESSAGE", `node ${peer.nodeId} replied "${reply.type}" to "${type}"; expected "${expect}"`);
  return reply;
}
