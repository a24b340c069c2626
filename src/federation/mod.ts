/**
 * Federation between nodes (seed 003 §6): node identity, signed messages, delegation chains, revocation, and delegated
 * runs whose capsules the requesting node verifies. Web-standard; the platform hands in files, clock, transport and
 * the engine environment.
 * @module
 */
export { signDocument, signedBytes, verifyDocument } from "./_signed.ts";
export type { Ed25519Signature } from "./_signed.ts";
export { createNode, isLoopbackHost, normalizeEndpoint, parseNodeIdentity, publicKeyHex, randomUuidV4 } from "./identity.ts";
export type { NodeSelf } from "./identity.ts";
export { assertScope, entryCovers, grantedInfraTools, packDeclarations, packExcess, scopeEntryProblem, scopeExcess } from "./scope.ts";
export type { ScopeKind } from "./scope.ts";
export { expiryFrom, MAX_SCOPE_ENTRIES, parseDelegation, signDelegation, verifyDelegation } from "./delegation.ts";
export type { DelegationDraft } from "./delegation.ts";
export { CLOCK_WINDOW_MS, entitledRevokers, MAX_CHAIN_LENGTH, validateChain } from "./chain.ts";
export type { ChainContext, ValidChain } from "./chain.ts";
export { FEDERATION_PROTOCOL, MESSAGE_TYPES, MESSAGES_PATH, MessageSchema, newNonce, NODE_PATH, openMessage, signMessage } from "./message.ts";
export type { Message, MessageDraft, MessageType, ReceiveContext } from "./message.ts";
export { NonceBook, NonceFileSchema } from "./nonces.ts";
export type { NonceFile } from "./nonces.ts";
export { checkRevocation, DEFAULT_PULL_INTERVAL_MS, isGenuine, MAX_PULL_INTERVAL_MS, MAX_RELAYED_PER_NODE, MAX_REVOCATIONS_PER_NODE, parseRevocation, REVOCATION_TYPE, RevocationSchema, signRevocation } from "./revocation.ts";
export type { Revocation } from "./revocation.ts";
export { NodeState } from "./state.ts";
export type { NodeStateOptions } from "./state.ts";
export type { NodeFiles } from "./node-files.ts";
export { limitError, REVOCATIONS_DIR, RevocationStore } from "./revocation-store.ts";
export { annexJsonl, runDelegatedPack, verifyCapsule } from "./engine-adapter.ts";
export type { DelegatedEngineRequest, EngineHost } from "./engine-adapter.ts";
export { delegationAnnex } from "./annex.ts";
export { executeRunRequest, MAX_PACK_ARCHIVE_BYTES, RunRequestBodySchema } from "./run-request.ts";
export type { DelegateContext, RunRequestBody } from "./run-request.ts";
export { createNodeApp, MAX_REQUEST_BYTES, nodeView } from "./server.ts";
export type { NodeServerOptions, NodeView } from "./server.ts";
export { exchange, MAX_REPLY_BYTES, postEnvelope, readLimited } from "./client.ts";
export type { ClientContext, PeerFetch } from "./client.ts";
export { checkDelegatedCapsule } from "./capsule-check.ts";
export type { DelegatedRunClaim } from "./capsule-check.ts";
export { requestDelegatedRun, resolveChain } from "./delegated-client.ts";
export type { DelegatedRun, DelegatedRunRequest } from "./delegated-client.ts";
export { pullRevocations, pushRevocations, startRevocationSync } from "./sync.ts";
export type { PeerOutcome } from "./sync.ts";
