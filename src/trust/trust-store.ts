/**
 * The trust store: the public keys whose signed packs run unrestricted (seed 003 §5.4).
 *
 * Format, version 1 (UTF-8 JSON; no unknown fields):
 * ```
 * {
 *   "version": 1,
 *   "keys": [
 *     { "publicKey": "<64 lowercase hex: an Ed25519 public key>", "name": "<who holds it, 1-256 characters>" }
 *   ]
 * }
 * ```
 * Every key must be a usable Ed25519 public key (canonical, on the curve, not of small order) and appear once.
 * `keys` may be empty (nothing is trusted). The `publicKey` is the same hex as in the public key file that
 * `reach-wasm keygen` writes, so adding a key is copying one field.
 * @module
 */
import { z } from "zod";
import { bytesToHex, hexToBytes } from "../canonical/mod.ts";
import { hex32, HEX32_RE, parseDocument, parseJsonText, strictObject } from "./_schema.ts";
import { publicKeyProblem } from "./verify.ts";
import { typedSchema } from "../protocol/mod.ts";
import type { StrictObject } from "../protocol/mod.ts";

/** The trust store version this code writes and reads. */
export const TRUST_STORE_VERSION = 1;

/** One trusted key. */
export const TrustedKeySchema: () => StrictObject<{ publicKey: z.ZodString; name: z.ZodString }> = typedSchema(() => strictObject("trust store keys[]", {
  publicKey: hex32("an Ed25519 public key"),
  name: z
    .string()
    .min(1, { error: "give the key a name (1-256 characters) so that a reviewer knows whose key it is" })
    .max(256),
}));

/** The trust store document (version 1). */
export const TrustStoreSchema: () => StrictObject<{
  version: z.ZodLiteral<typeof TRUST_STORE_VERSION>;
  keys: z.ZodArray<ReturnType<typeof TrustedKeySchema>>;
}> = typedSchema(() => strictObject("trust store", {
  version: z.literal(TRUST_STORE_VERSION, {
    error: `expected "version": ${TRUST_STORE_VERSION}; this reach-wasm reads trust stores of version 1 only`,
  }),
  keys: z.array(TrustedKeySchema()),
}).superRefine((doc, ctx) => {
  const seen = new Map<string, number>();
  doc.keys.forEach((key, i) => {
    const problem = HEX32_RE.test(key.publicKey) ? publicKeyProblem(hexToBytes(key.publicKey)) : undefined;
    if (problem !== undefined) {
      ctx.addIssue({ code: "custom", path: ["keys", i, "publicKey"], message: `the key ${problem}; remove it` });
    }
    const first = seen.get(key.publicKey);
    if (first !== undefined) {
      ctx.addIssue({
        code: "custom",
        path: ["keys", i, "publicKey"],
        message: `the same key is already listed at keys[${first}]; keep one entry per key`,
      });
    } else {
      seen.set(key.publicKey, i);
    }
  });
}));

/** A trusted key entry. */
export type TrustedKey = z.output<ReturnType<typeof TrustedKeySchema>>;
/** A trust store document. */
export type TrustStoreDocument = z.output<ReturnType<typeof TrustStoreSchema>>;

const HINT = 'a trust store is {"version": 1, "keys": [{"publicKey": "<64 hex>", "name": "…"}]}';

/** A validated, immutable trust store. Read one with {@link parseTrustStore}.
 * @example
 * ```ts
 * const store = new TrustStore({ version: 1, keys: [] });
 * console.log(store.isTrusted("00".repeat(32))); // false
 * ```
 */
export class TrustStore {
  /** The entries, in document order. */
  readonly keys: readonly TrustedKey[];
  readonly #names: ReadonlyMap<string, string>;

  /**
   * Validate a parsed trust store document.
   * @param value the document (untrusted parsed JSON)
   * @throws ReachError `PROTO_INVALID_ARGUMENT` listing every problem (unknown field, bad or duplicate key, …)
   * @example new TrustStore({ version: 1, keys: [{ publicKey: hex, name: "ci" }] }).isTrusted(hex) // true
   */
  constructor(value: unknown) {
    const doc = parseDocument(TrustStoreSchema(), value, "PROTO_INVALID_ARGUMENT", "trust store", HINT);
    this.keys = Object.freeze(doc.keys.map((k) => Object.freeze({ publicKey: k.publicKey, name: k.name })));
    this.#names = new Map(doc.keys.map((k) => [k.publicKey, k.name]));
  }

  /**
   * True when the store lists `publicKey`.
   * @param publicKey the key as 64 lowercase hex digits, or as 32 bytes
   * @returns whether the key is trusted
   * @throws TypeError when `publicKey` is neither 64 lowercase hex digits nor a 32-byte Uint8Array
   * @example store.isTrusted("3b6a27bc…da29") // true
   */
  isTrusted(publicKey: string | Uint8Array): boolean {
    return this.#names.has(keyHex(publicKey));
  }

  /**
   * The name the store gives `publicKey`.
   * @param publicKey the key as 64 lowercase hex digits, or as 32 bytes
   * @returns the name, or undefined when the key is not trusted
   * @throws TypeError when `publicKey` is neither 64 lowercase hex digits nor a 32-byte Uint8Array
   * @example store.nameOf(pair.publicKey) // "release key"
   */
  nameOf(publicKey: string | Uint8Array): string | undefined {
    return this.#names.get(keyHex(publicKey));
  }

  /** The document form (version 1). */
  toJSON(): TrustStoreDocument {
    return { version: TRUST_STORE_VERSION, keys: this.keys.map((k) => ({ publicKey: k.publicKey, name: k.name })) };
  }
}

function keyHex(publicKey: string | Uint8Array): string {
  if (publicKey instanceof Uint8Array && publicKey.length === 32) return bytesToHex(publicKey);
  if (typeof publicKey === "string" && HEX32_RE.test(publicKey)) return publicKey;
  throw new TypeError(`"publicKey" expected 64 lowercase hex digits or a Uint8Array of length 32`);
}

/**
 * Read a trust store file strictly.
 * @param text the file text
 * @returns the trust store
 * @throws ReachError `PROTO_INVALID_ARGUMENT` when the text is not JSON or not a valid version-1 trust store
 * @example
 * ```ts
 * const store = parseTrustStore('{"version":1,"keys":[]}');
 * console.log(store.keys.length); // 0
 * ```
 */
export function parseTrustStore(text: string): TrustStore {
  return new TrustStore(parseJsonText(text, "PROTO_INVALID_ARGUMENT", "trust store", HINT));
}

/**
 * The text of a trust store file (JSON, 2-space indented, trailing newline).
 * @param store the trust store
 * @returns the file text
 * @example
 * ```ts
 * const text: string = formatTrustStore(new TrustStore({ version: 1, keys: [] }));
 * ```
 */
export function formatTrustStore(store: TrustStore): string {
  if (!(store instanceof TrustStore)) {
    throw new TypeError(`"store" expected a TrustStore; build one with new TrustStore(doc)`);
  }
  return JSON.stringify(store.toJSON(), null, 2) + "\n";
}
