/**
 * Signed messages between nodes (seed 003 §6.1 "All federation messages MUST be signed", §6.3 "Inter-node: verify
 * all signatures"). Every request and every reply is one JSON envelope:
 * ```
 * {"protocol":"reach-wasm/federation/1","type":"run.request","from":"<node id>","to":"<node id>",
 *  "nonce":"<32 hex>","timestamp":"<ISO 8601 UTC ms>","inReplyTo":"<nonce>"?,"body":{…},
 *  "signature":{"algorithm":"Ed25519","publicKey":"<base64>","signature":"<base64>"}}
 * ```
 * signed by the sender's node key over its canonical JSON without `signature` (RFC 8785; `_signed.ts`).
 *
 * | refusal | code |
 * |---|---|
 * | not an envelope | `PROTO_INVALID_MESSAGE` |
 * | no signature | `FED_SIGNATURE_MISSING` |
 * | addressed to another node | `FED_TRUST_VIOLATION` |
 * | sender not registered here | `FED_NODE_UNAUTHORIZED` |
 * | signature does not verify against the sender's registered key | `FED_SIGNATURE_INVALID` |
 * | timestamp more than 120 s from this node's clock | `FED_MESSAGE_STALE` |
 * | nonce already seen from this sender (replay) | `FED_MESSAGE_REPLAYED` |
 * @module
 */
import { z } from "zod";
import { bytesToHex } from "../canonical/mod.ts";
import { strictObject, timestamp, uuid } from "../protocol/mod.ts";
import { DelegationSignatureSchema } from "../protocol/mod.ts";
import { ReachError } from "../protocol/mod.ts";
import { parseOrThrow } from "../protocol/mod.ts";
import type { Ed25519Signature } from "./_signed.ts";
import { signDocument, verifyDocument } from "./_signed.ts";
import { CLOCK_WINDOW_MS } from "./chain.ts";
import type { NonceBook } from "./nonces.ts";

/** The route every envelope is posted to. */
export const MESSAGES_PATH = "/federation/v1/messages";
/** The route of a node's public identity. */
export const NODE_PATH = "/federation/v1/node";
/** The protocol tag of every envelope. */
export const FEDERATION_PROTOCOL = "reach-wasm/federation/1";

/** Message types: requests and their replies. */
export const MESSAGE_TYPES = ["run.request", "run.result", "revocation.push", "revocation.ack", "revocation.pull", "revocation.list", "error"] as const;
/** A message type. */
export type MessageType = (typeof MESSAGE_TYPES)[number];

const nonce = () => z.string().regex(/^[0-9a-f]{32}$/, { error: "expected a nonce of 32 lowercase hex digits" });

/** A federation envelope (the signature is optional here so that its absence gets its own code). */
export const MessageSchema = strictObject("federation message", {
  protocol: z.literal(FEDERATION_PROTOCOL, { error: `expected "protocol": "${FEDERATION_PROTOCOL}"` }),
  type: z.enum(MESSAGE_TYPES),
  from: uuid(),
  to: uuid(),
  nonce: nonce(),
  timestamp: timestamp(),
  inReplyTo: nonce().optional(),
  body: z.record(z.string(), z.unknown()),
  signature: DelegationSignatureSchema().optional(),
});

/** A signed envelope. */
export type Message = z.output<typeof MessageSchema> & { signature: Ed25519Signature };

/** What to send. */
export type MessageDraft = { type: MessageType; from: string; to: string; body: Record<string, unknown>; inReplyTo?: string };

/**
 * A fresh nonce: 16 random bytes as hex (`crypto.getRandomValues`).
 * @returns 32 lowercase hex digits
 * @throws never
 * @example newNonce() // "9f2c…"
 */
export function newNonce(): string {
  return bytesToHex(crypto.getRandomValues(new Uint8Array(16)));
}

/**
 * Sign an envelope.
 * @param draft type, sender, recipient, body and the nonce replied to
 * @param privateKey the sender's node key (32-byte seed)
 * @param nowMs the sender's clock (ms since the epoch)
 * @param nonceHex the nonce (default: fresh)
 * @returns the signed envelope
 * @throws TypeError when the body is not canonical JSON
 * @example const msg = signMessage({ type: "revocation.pull", from: a, to: b, body: {} }, seed, Date.now());
 */
export function signMessage(draft: MessageDraft, privateKey: Uint8Array, nowMs: number, nonceHex: string = newNonce()): Message {
  const doc: Record<string, unknown> = { protocol: FEDERATION_PROTOCOL, type: draft.type, from: draft.from, to: draft.to, nonce: nonceHex, timestamp: new Date(nowMs).toISOString(), body: draft.body };
  if (draft.inReplyTo !== undefined) doc["inReplyTo"] = draft.inReplyTo;
  return signDocument(doc, privateKey) as unknown as Message;
}

/** What the receiving node knows. */
export type ReceiveContext = {
  /** This node's id. */
  self: string;
  /** Now, ms since the epoch. */
  now: number;
  /** The registered key (padded base64) of a node; undefined when unregistered. */
  keyOf(nodeId: string): string | undefined;
  /** Seen nonces (absent: no replay check, for replies bound by `inReplyTo`). */
  nonces?: NonceBook;
};

/**
 * Authenticate an envelope: shape, signature, sender, recipient, clock window and nonce (see the module notes).
 * A nonce is recorded only when everything else holds, so a forged message cannot burn a real one.
 * @param value the parsed JSON
 * @param ctx this node, its clock, its registry and its nonces
 * @returns the authenticated envelope
 * @throws ReachError with the code of the first failed check
 * @example const msg = openMessage(await req.json(), { self, now: Date.now(), keyOf, nonces });
 */
export function openMessage(value: unknown, ctx: ReceiveContext): Message {
  if (value !== null && typeof value === "object" && !Array.isArray(value) && (value as Record<string, unknown>)["signature"] === undefined) {
    throw new ReachError("FED_SIGNATURE_MISSING", "the federation message is not signed; every message between nodes must carry the sender's Ed25519 signature");
  }
  const msg = parseOrThrow(MessageSchema, value, "PROTO_INVALID_MESSAGE", "the federation message") as Message;
  const info = { from: msg.from, type: msg.type, nonce: msg.nonce };
  if (msg.to !== ctx.self) throw new ReachError("FED_TRUST_VIOLATION", `the message is addressed to node ${msg.to}, not to this node (${ctx.self})`, { details: info });
  const key = ctx.keyOf(msg.from);
  if (key === undefined) throw new ReachError("FED_NODE_UNAUTHORIZED", `node ${msg.from} is not registered here; its operator must be registered with \`reach-wasm node trust\` on node ${ctx.self}`, { details: info });
  if (!verifyDocument(msg, key)) throw new ReachError("FED_SIGNATURE_INVALID", `the message from ${msg.from} does not verify against its registered key; it was altered or not signed by that node`, { details: info });
  const at = Date.parse(msg.timestamp);
  if (Math.abs(at - ctx.now) > CLOCK_WINDOW_MS) {
    throw new ReachError("FED_MESSAGE_STALE", `the message from ${msg.from} is dated ${msg.timestamp}, more than ${CLOCK_WINDOW_MS / 1000} s from this node's clock (${new Date(ctx.now).toISOString()}); check both clocks`, { details: { ...info, timestamp: msg.timestamp } });
  }
  if (ctx.nonces !== undefined && !ctx.nonces.record(msg.from, msg.nonce, at)) {
    throw new ReachError("FED_MESSAGE_REPLAYED", `the message from ${msg.from} with nonce ${msg.nonce} was already received; a message is accepted once`, { details: info });
  }
  return msg;
}
