/**
 * Federation documents: node identity (seed 003 §6.1) and delegation (seed 003 §6.2).
 * @module
 */
import { z } from "zod";
import { distinct, ed25519PublicKey, ed25519Signature, strictObject, timestamp, uuid } from "./_common.ts";
import { lazySchema } from "./_lazy.ts";

/**
 * A federation node (seed 003 §6.1): a persistent UUID, an Ed25519 key, an endpoint. The seed asks for HTTPS;
 * `http:` is accepted here so that loopback test nodes can be described, and the transport refuses plain HTTP
 * to anything but loopback.
 */
export const NodeIdentitySchema = lazySchema(() => strictObject("node identity", {
  nodeId: uuid(),
  publicKey: ed25519PublicKey(),
  endpoint: z.url({ protocol: /^https?$/, error: "expected an https:// endpoint URL" }),
}).meta({ description: "A federation node identity (Reach Protocol v1.0.0 §6.1)" }));

/** The delegator's signature over the canonical delegation without `signature` (seed 003 §6.2 rule 4). */
export const DelegationSignatureSchema = lazySchema(() => strictObject("delegation.signature", {
  algorithm: z.literal("Ed25519"),
  publicKey: ed25519PublicKey(),
  signature: ed25519Signature(),
}));

/**
 * A delegation (seed 003 §6.2): `delegator` lets `delegate` act within `scope` until `expiresAt`. `parent`
 * names the delegation the delegator itself holds, forming a chain validated at each hop (§6.3). Scope ⊆
 * delegator's capabilities and signature validity are checked by the federation layer, not the schema.
 */
export const DelegationSchema = lazySchema(() => strictObject("delegation", {
  delegationId: uuid(),
  delegator: uuid(),
  delegate: uuid(),
  scope: z
    .array(z.string().min(1))
    .min(1)
    .refine(distinct, "delegation.scope: each capability may appear once")
    .meta({ uniqueItems: true }),
  issuedAt: timestamp(),
  expiresAt: timestamp(),
  parent: uuid().optional(),
  signature: DelegationSignatureSchema(),
})
  .refine((d) => d.issuedAt < d.expiresAt, {
    path: ["expiresAt"],
    message: "delegation.expiresAt must be later than issuedAt",
  })
  .refine((d) => d.delegator !== d.delegate, {
    path: ["delegate"],
    message: "delegation.delegate must differ from delegator",
  })
  .meta({ description: "A federation delegation (Reach Protocol v1.0.0 §6.2)" }));

/** A node identity. */
export type NodeIdentity = z.output<ReturnType<typeof NodeIdentitySchema>>;
/** A delegation. */
export type Delegation = z.output<ReturnType<typeof DelegationSchema>>;
/** A delegation signature. */
export type DelegationSignature = z.output<ReturnType<typeof DelegationSignatureSchema>>;
