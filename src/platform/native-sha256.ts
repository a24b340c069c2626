/**
 * The native synchronous SHA-256 backend: `node:crypto`, which Node and Deno both provide. The platform hands it to
 * the engine as `EngineEnvironment.sha256` (`src/host/environment.ts`).
 * @module
 */
import * as nodeCrypto from "node:crypto";
import type { Sha256Backend } from "../canonical/mod.ts";

type OneShotHash = {
  (algorithm: string, data: Uint8Array | string, outputEncoding: "buffer"): Uint8Array;
  (algorithm: string, data: Uint8Array | string, outputEncoding: "hex"): string;
};

/**
 * One-shot `crypto.hash` (Node ≥ 20.12 / 21.7; Deno's node:crypto has it too). It skips the Hash object that
 * `createHash` allocates and is ~40% faster on Node for 1 KiB inputs — the event-log hot path. Runtimes without it
 * fall back to `createHash("sha256")`; both give identical digests (checked in `sha256.test.ts`).
 */
const oneShot: OneShotHash | undefined = (() => {
  const candidate = (nodeCrypto as unknown as { hash?: unknown }).hash;
  return typeof candidate === "function" ? (candidate as OneShotHash) : undefined;
})();

/** A plain `Uint8Array` view of a Buffer, so callers see the same type on both runtimes. */
function plain(buf: Uint8Array): Uint8Array {
  return new Uint8Array(buf.buffer, buf.byteOffset, buf.byteLength);
}

/** SHA-256 through `node:crypto` (OpenSSL on Node, Rust crates on Deno). Digests are plain `Uint8Array`s. */
export const nativeSha256Backend: Sha256Backend = {
  name: "node:crypto",
  digest: oneShot
    ? (data: Uint8Array): Uint8Array => plain(oneShot("sha256", data, "buffer"))
    : (data: Uint8Array): Uint8Array => plain(nodeCrypto.createHash("sha256").update(data).digest()),
  // Strings are hashed as UTF-8 by node:crypto itself, skipping a TextEncoder pass and the hex conversion.
  // Lone surrogates would become U+FFFD exactly as TextEncoder does, so the two paths agree on every string.
  hex: oneShot
    ? (data: Uint8Array | string): string => oneShot("sha256", data, "hex")
    : (data: Uint8Array | string): string => nodeCrypto.createHash("sha256").update(data).digest("hex"),
};

