/**
 * Ed25519 key pairs and their files (seed 003 §5.4, §8.3; written by `reach-wasm keygen`).
 *
 * Key file format, version 1 (UTF-8 JSON, 2-space indented, one trailing newline; readers accept any JSON
 * whitespace and key order, but no unknown fields):
 * ```
 * private key file (keep it secret; `keygen` writes it with mode 0600):
 * {
 *   "type": "reach-wasm/ed25519-private-key",
 *   "version": 1,
 *   "publicKey": "<64 lowercase hex: the 32-byte public key>",
 *   "privateKey": "<64 lowercase hex: the 32-byte RFC 8032 secret seed>"
 * }
 * public key file (safe to share; what a trust store lists):
 * {
 *   "type": "reach-wasm/ed25519-public-key",
 *   "version": 1,
 *   "publicKey": "<64 lowercase hex>"
 * }
 * ```
 * The private key is the RFC 8032 seed (not the 64-byte expanded key of some libraries); `publicKey` in the
 * private key file is redundant and must equal the key derived from the seed, which catches a damaged or
 * hand-edited file before it signs anything. Hex is used, not base64, so a key reads the same in every reach-wasm
 * file except the upstream `Signature` document, which the upstream schema fixes to base64.
 * @module
 */
import { z } from "zod";
import { bytesToHex, hexToBytes } from "../canonical/mod.ts";
import { ReachError } from "../protocol/mod.ts";
import { hex32, parseDocument, parseJsonText, strictObject, typeField } from "./_schema.ts";
import { PRIVATE_KEY_LENGTH, publicKeyFromPrivateKey, publicKeyProblem } from "./verify.ts";
import { lazySchema } from "../protocol/mod.ts";

/** `type` of a private key file. */
export const PRIVATE_KEY_FILE_TYPE = "reach-wasm/ed25519-private-key";
/** `type` of a public key file. */
export const PUBLIC_KEY_FILE_TYPE = "reach-wasm/ed25519-public-key";
/** The key file version this code writes and reads. */
export const KEY_FILE_VERSION = 1;

/** An Ed25519 key pair: the 32-byte RFC 8032 seed and the 32-byte public key derived from it. */
export type KeyPair = { readonly publicKey: Uint8Array; readonly privateKey: Uint8Array };

/** Both files of a key pair, as text. */
export type KeyFiles = { readonly privateKeyFile: string; readonly publicKeyFile: string };

const version = lazySchema(() => z.literal(KEY_FILE_VERSION, {
  error: `expected "version": ${KEY_FILE_VERSION}; this reach-wasm reads key files of version ${KEY_FILE_VERSION} only`,
}));

/** The private key file (version 1). */
export const PrivateKeyFileSchema = lazySchema(() => strictObject("private key file", {
  type: z.literal(PRIVATE_KEY_FILE_TYPE, { error: `expected "type": "${PRIVATE_KEY_FILE_TYPE}"` }),
  version: version(),
  publicKey: hex32("an Ed25519 public key"),
  privateKey: hex32("an Ed25519 private key seed"),
}));

/** The public key file (version 1). */
export const PublicKeyFileSchema = lazySchema(() => strictObject("public key file", {
  type: z.literal(PUBLIC_KEY_FILE_TYPE, { error: `expected "type": "${PUBLIC_KEY_FILE_TYPE}"` }),
  version: version(),
  publicKey: hex32("an Ed25519 public key"),
}));

/** A private key file document. */
export type PrivateKeyFile = z.output<ReturnType<typeof PrivateKeyFileSchema>>;
/** A public key file document. */
export type PublicKeyFile = z.output<ReturnType<typeof PublicKeyFileSchema>>;

const KEYGEN_HINT = "create a key pair with `reach-wasm keygen --out FILE`";

/**
 * Generate a key pair. Key generation is not on a hashed path, so it uses the runtime's cryptographic random
 * source (`crypto.getRandomValues`) unless the seed is given.
 * @param randomBytes optional 32-byte seed (for tests and for deriving a key from a stored secret); copied
 * @returns the key pair
 * @throws TypeError / RangeError when `randomBytes` is not 32 bytes
 * @example
 * ```ts
 * const pair = generateKeyPair();
 * console.log(pair.publicKey.length, pair.privateKey.length); // 32 32
 * ```
 */
export function generateKeyPair(randomBytes?: Uint8Array): KeyPair {
  let seed: Uint8Array;
  if (randomBytes === undefined) {
    seed = crypto.getRandomValues(new Uint8Array(PRIVATE_KEY_LENGTH));
  } else {
    if (!(randomBytes instanceof Uint8Array)) {
      throw new TypeError(
        `"randomBytes" expected Uint8Array of length ${PRIVATE_KEY_LENGTH}, got ${typeof randomBytes}`,
      );
    }
    if (randomBytes.length !== PRIVATE_KEY_LENGTH) {
      throw new RangeError(
        `"randomBytes" expected Uint8Array of length ${PRIVATE_KEY_LENGTH}, got length=${randomBytes.length}`,
      );
    }
    seed = randomBytes.slice();
  }
  return { privateKey: seed, publicKey: publicKeyFromPrivateKey(seed) };
}

/**
 * The text of a public key file.
 * @param publicKey 32-byte public key
 * @returns the file text (JSON, trailing newline)
 * @throws TypeError / RangeError when `publicKey` is not a usable 32-byte key
 * @example formatPublicKeyFile(pair.publicKey) // '{\n  "type": "reach-wasm/ed25519-public-key", …'
 */
export function formatPublicKeyFile(publicKey: Uint8Array): string {
  const problem = publicKeyProblem(publicKey);
  if (problem !== undefined) throw new RangeError(`"publicKey" ${problem}`);
  const doc: PublicKeyFile = {
    type: PUBLIC_KEY_FILE_TYPE,
    version: KEY_FILE_VERSION,
    publicKey: bytesToHex(publicKey),
  };
  return JSON.stringify(doc, null, 2) + "\n";
}

/**
 * The texts of both key files of a pair.
 * @param pair the key pair; `publicKey` must be the one derived from `privateKey`
 * @returns `{privateKeyFile, publicKeyFile}`
 * @throws TypeError / RangeError when the keys are not 32 bytes or do not belong together
 * @example
 * ```ts
 * const files = formatKeyFiles(generateKeyPair());
 * console.log(files.privateKeyFile, files.publicKeyFile); // write the first with mode 0600
 * ```
 */
export function formatKeyFiles(pair: KeyPair): KeyFiles {
  const derived = bytesToHex(publicKeyFromPrivateKey(pair.privateKey));
  const publicKey = pair.publicKey instanceof Uint8Array ? bytesToHex(pair.publicKey) : "";
  if (derived !== publicKey) {
    throw new RangeError(`"pair.publicKey" is not the public key of "pair.privateKey"; use generateKeyPair(seed)`);
  }
  const doc: PrivateKeyFile = {
    type: PRIVATE_KEY_FILE_TYPE,
    version: KEY_FILE_VERSION,
    publicKey,
    privateKey: bytesToHex(pair.privateKey),
  };
  return { privateKeyFile: JSON.stringify(doc, null, 2) + "\n", publicKeyFile: formatPublicKeyFile(pair.publicKey) };
}

/**
 * Read a private key file strictly.
 * @param text the file text
 * @returns the key pair
 * @throws ReachError `PROTO_INVALID_ARGUMENT` when the text is not JSON, is a public key file, has a wrong type,
 * version or unknown field, a field that is not 64 lowercase hex digits, or a `publicKey` that is not the seed's
 * @example
 * ```ts
 * const pair = parsePrivateKeyFile(formatKeyFiles(generateKeyPair()).privateKeyFile);
 * console.log(pair.publicKey.length); // 32
 * ```
 */
export function parsePrivateKeyFile(text: string): KeyPair {
  const what = "private key file";
  const value = parseJsonText(text, "PROTO_INVALID_ARGUMENT", what, KEYGEN_HINT);
  if (typeField(value) === PUBLIC_KEY_FILE_TYPE) {
    throw new ReachError(
      "PROTO_INVALID_ARGUMENT",
      `${what}: this is a public key file ("type": "${PUBLIC_KEY_FILE_TYPE}"); signing needs the private key file ` +
        `that \`reach-wasm keygen\` wrote together with it`,
    );
  }
  const doc = parseDocument(PrivateKeyFileSchema(), value, "PROTO_INVALID_ARGUMENT", what, KEYGEN_HINT);
  const privateKey = hexToBytes(doc.privateKey);
  const derived = bytesToHex(publicKeyFromPrivateKey(privateKey));
  if (derived !== doc.publicKey) {
    throw new ReachError(
      "PROTO_INVALID_ARGUMENT",
      `${what}: "publicKey" ${doc.publicKey} is not the public key of "privateKey" (that is ${derived}); ` +
        `the file is damaged or was edited by hand: restore it from a backup or ${KEYGEN_HINT}`,
      { details: { expectedPublicKey: derived, publicKey: doc.publicKey } },
    );
  }
  return { privateKey, publicKey: hexToBytes(doc.publicKey) };
}

/**
 * Read a public key file strictly.
 * @param text the file text
 * @returns the 32-byte public key
 * @throws ReachError `PROTO_INVALID_ARGUMENT` when the text is not JSON, is a private key file, has a wrong type,
 * version or unknown field, a key that is not 64 lowercase hex digits, or a key that is not a usable curve point
 * @example
 * ```ts
 * const publicKey: Uint8Array = parsePublicKeyFile(formatKeyFiles(generateKeyPair()).publicKeyFile);
 * ```
 */
export function parsePublicKeyFile(text: string): Uint8Array {
  const what = "public key file";
  const value = parseJsonText(text, "PROTO_INVALID_ARGUMENT", what, KEYGEN_HINT);
  if (typeField(value) === PRIVATE_KEY_FILE_TYPE) {
    throw new ReachError(
      "PROTO_INVALID_ARGUMENT",
      `${what}: this is a PRIVATE key file ("type": "${PRIVATE_KEY_FILE_TYPE}"); never hand it out. Use the public ` +
        `key file that \`reach-wasm keygen\` wrote together with it`,
    );
  }
  const doc = parseDocument(PublicKeyFileSchema(), value, "PROTO_INVALID_ARGUMENT", what, KEYGEN_HINT);
  const publicKey = hexToBytes(doc.publicKey);
  const problem = publicKeyProblem(publicKey);
  if (problem !== undefined) {
    throw new ReachError("PROTO_INVALID_ARGUMENT", `${what}: "publicKey" ${problem}; ${KEYGEN_HINT}`);
  }
  return publicKey;
}
