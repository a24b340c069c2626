/**
 * reach-wasm: deterministic, auditable execution of agentic tool calls (Reach Protocol v1.0.0).
 * The public API, re-exports only. Importing it installs the runtime's native SHA-256 (node:crypto on Node and
 * Deno) as the hashing backend; results are identical to the portable @noble/hashes backend.
 * @module
 */
import { installNativeSha256 } from "./platform/native-sha256.ts";

installNativeSha256();

export * from "./protocol/mod.ts";
export * from "./canonical/mod.ts";
export * from "./determinism/mod.ts";
export * from "./ledger/mod.ts";
export * from "./trust/mod.ts";
export * from "./capsule/mod.ts";
export * from "./engine/mod.ts";
