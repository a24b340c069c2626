/**
 * Pack signatures (seed 003 §5.4: Ed25519 over a SHA-256 digest, in `.reach/signature`, verified before execution).
 *
 * **Pack listing and digest.** The listing of a pack is one `{"path", "sha256", "size"}` entry per file: `path`
 * relative to the pack root, `/`-separated, normalized (no leading `/` or `./`, no `.`, `..` or empty segment, no
 * `\`, printable ASCII only: the capsule entry-path rule), `sha256` the lowercase hex SHA-256 of the file's bytes,
 * `size` its length in bytes; entries sorted by path in ascending UTF-16 code-unit order (= byte order, ASCII).
 * `.reach/signature` itself is left out; every other file is in, `.reach/` included. Directories are not listed.
 * ```
 * packDigest = hex(SHA-256(JCS({"files": listing})))          JCS = RFC 8785, as everywhere in reach-wasm
 * ```
 * **Signature document** (`.reach/signature`, UTF-8 JSON, 2-space indented; no unknown fields):
 * ```
 * {
 *   "algorithm": "Ed25519", "digest": "SHA-256",         ─┐ the upstream `Signature` fields (pack.schema.json);
 *   "signature": "<base64, 64 bytes>",                      │ base64 as upstream requires; `publicKey` is
 *   "publicKey": "<base64, 32 bytes>",                      │ required here
 *   "signedAt": "2026-01-01T00:00:00.000Z",  (optional)   ─┘ only when the signer passed it; never the wall clock
 *   "type": "reach-wasm/pack-signature", "version": 1,
 *   "packDigest": "<hex>",
 *   "files": [ {"path", "sha256", "size"}, … ]             the listing, so that a verifier can name what changed
 * }
 * ```
 * **What is signed:** the UTF-8 bytes of `JCS({"type": "reach-wasm/pack-signature", "version": 1, "packDigest",
 * "signedAt"?})`. The `type` field keeps a pack signature from ever being taken for a run or step proof made with the
 * same key, and `signedAt`, when present, is signed too. `files` is covered through `packDigest`.
 * @module
 */
import { z } from "zod";
import { base64ToBytes, bytesToBase64, bytesToHex } from "../canonical/mod.ts";
import { canonicalBytes, hashCanonical } from "../canonical/mod.ts";
import { sha256Hex } from "../canonical/mod.ts";
import { ReachError } from "../protocol/mod.ts";
import type { ErrorDetailsData } from "../protocol/mod.ts";
import { PackSignatureSchema } from "../protocol/mod.ts";
import { entryPath, isEntryPath, parseDocument, parseJsonText, sha256Hex as sha256HexSchema, strictObject } from "./_schema.ts";
import type { TrustStore } from "./trust-store.ts";
import { publicKeyFromPrivateKey, publicKeyProblem, signEd25519, verifyEd25519 } from "./verify.ts";
import { typedSchema } from "../protocol/mod.ts";
import type { StrictObject } from "../protocol/mod.ts";

/** Where the signature lives inside a pack (seed 003 §5.4). Excluded from the listing. */
export const PACK_SIGNATURE_PATH = ".reach/signature";
/** `type` of the signature document and of the signed statement. */
export const PACK_SIGNATURE_TYPE = "reach-wasm/pack-signature";
/** The signature document version this code writes and reads. */
export const PACK_SIGNATURE_VERSION = 1;

/** A pack's files in memory: path → bytes. The CLI reads the directory; this module never touches a file system. */
export type PackFiles = ReadonlyMap<string, Uint8Array> | Readonly<Record<string, Uint8Array>>;

/** One entry of the pack listing. */
export const PackFileEntrySchema: () => StrictObject<{ path: z.ZodString; sha256: z.ZodString; size: z.ZodInt }> = typedSchema(() => strictObject(".reach/signature files[]", {
  path: entryPath(),
  sha256: sha256HexSchema(),
  size: z.int().min(0),
}));
/** One entry of the pack listing. */
export type PackFileEntry = z.output<ReturnType<typeof PackFileEntrySchema>>;

function ascending(entries: readonly PackFileEntry[]): boolean {
  for (let i = 1; i < entries.length; i++) if (!(entries[i - 1]!.path < entries[i]!.path)) return false;
  return true;
}

/** The `.reach/signature` document (version 1). */
export const PackSignatureDocumentSchema: () => StrictObject<{
  algorithm: z.ZodLiteral<"Ed25519">;
  digest: z.ZodLiteral<"SHA-256">;
  signature: z.ZodString;
  publicKey: z.ZodString;
  signedAt: z.ZodOptional<z.ZodISODateTime>;
  type: z.ZodLiteral<typeof PACK_SIGNATURE_TYPE>;
  version: z.ZodLiteral<typeof PACK_SIGNATURE_VERSION>;
  packDigest: z.ZodString;
  files: z.ZodArray<ReturnType<typeof PackFileEntrySchema>>;
}> = typedSchema(() => strictObject(".reach/signature", {
  algorithm: PackSignatureSchema().shape.algorithm,
  digest: PackSignatureSchema().shape.digest,
  signature: PackSignatureSchema().shape.signature,
  publicKey: PackSignatureSchema().shape.publicKey.unwrap(),
  signedAt: PackSignatureSchema().shape.signedAt,
  type: z.literal(PACK_SIGNATURE_TYPE, { error: `expected "type": "${PACK_SIGNATURE_TYPE}"` }),
  version: z.literal(PACK_SIGNATURE_VERSION, {
    error: `expected "version": ${PACK_SIGNATURE_VERSION}; this reach-wasm reads pack signatures of version 1 only`,
  }),
  packDigest: sha256HexSchema(),
  files: z
    .array(PackFileEntrySchema())
    .refine(ascending, ".reach/signature files: paths must be unique and in ascending order"),
}));
/** A `.reach/signature` document. */
export type PackSignatureDocument = z.output<ReturnType<typeof PackSignatureDocumentSchema>>;

/** What a successful verification found. */
export type PackVerification = {
  /** Always true: a failed verification throws `PACK_INVALID_SIGNATURE`. */
  valid: true;
  /** The pack digest (lowercase hex). */
  digest: string;
  /** The signer's public key (64 lowercase hex, as in key files and trust stores). */
  publicKey: string;
  /** Whether the trust store lists the signer (false without a trust store). */
  trusted: boolean;
  /** The signer's name in the trust store, when trusted. */
  keyName?: string;
  /** `signedAt` of the document, when present (signed). */
  signedAt?: string;
};

const RESIGN = "re-sign the pack with `reach-wasm pack sign <dir> --key FILE` if the change is intended";

/**
 * The pack listing (see the module notes): every file except `.reach/signature`, sorted by path.
 * @param files path → bytes
 * @returns the sorted entries
 * @throws TypeError when `files` is not a Map or record of Uint8Array
 * @throws ReachError `PACK_MALFORMED` when a path is not a normalized relative path
 * @example packListing(new Map([["reach.json", utf8("{}")]])) // [{path: "reach.json", sha256: "44136fa3…", size: 2}]
 */
export function packListing(files: PackFiles): PackFileEntry[] {
  if (typeof files !== "object" || files === null) {
    throw new TypeError(`"files" expected a Map or record of Uint8Array`);
  }
  const pairs = files instanceof Map ? [...files.entries()] : Object.entries(files as Record<string, Uint8Array>);
  const entries: PackFileEntry[] = [];
  for (const [path, bytes] of pairs) {
    if (typeof path !== "string") throw new TypeError(`"files" expected string paths, got ${typeof path}`);
    if (!(bytes instanceof Uint8Array)) {
      throw new TypeError(`"files" value for ${JSON.stringify(path)} expected Uint8Array`);
    }
    if (path === PACK_SIGNATURE_PATH) continue;
    if (!isEntryPath(path)) {
      throw new ReachError(
        "PACK_MALFORMED",
        `pack file path ${JSON.stringify(path)} is not a normalized relative path ('/'-separated, printable ASCII, ` +
          `no leading '/' or './', no '.', '..' or empty segment, no '\\'); rename the file`,
        { details: { path } },
      );
    }
    entries.push({ path, sha256: sha256Hex(bytes), size: bytes.length });
  }
  return entries.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}

/**
 * The digest of a pack listing: `hex(SHA-256(JCS({"files": listing})))`.
 * @param listing the sorted entries (from {@link packListing} or a signature document)
 * @returns 64 lowercase hex digits
 * @throws TypeError when the listing is not JSON data
 * @example listingDigest([]) // sha256Hex('{"files":[]}')
 */
export function listingDigest(listing: readonly PackFileEntry[]): string {
  return hashCanonical({ files: listing.map((e) => ({ path: e.path, sha256: e.sha256, size: e.size })) });
}

/**
 * The pack digest (seed 003 §5.4 "Digest Algorithm: SHA-256"), as defined in the module notes.
 * @param files path → bytes
 * @returns 64 lowercase hex digits
 * @throws TypeError / ReachError `PACK_MALFORMED` as {@link packListing}
 * @example
 * ```ts
 * const digest: string = packDigest(new Map([["reach.json", new TextEncoder().encode("{}")]]));
 * ```
 */
export function packDigest(files: PackFiles): string {
  return listingDigest(packListing(files));
}

/**
 * The bytes an Ed25519 pack signature is made over: UTF-8 of `JCS({type, version, packDigest, signedAt?})`.
 * @param digest the pack digest (64 lowercase hex)
 * @param signedAt the document's `signedAt`, when it has one
 * @returns the message bytes
 * @throws TypeError when `signedAt` is given but is not a string
 * @example new TextDecoder().decode(packSignatureMessage(d)) // '{"packDigest":"…","type":"reach-wasm/pack-signature","version":1}'
 */
export function packSignatureMessage(digest: string, signedAt?: string): Uint8Array {
  if (typeof digest !== "string") throw new TypeError(`"digest" expected a string of 64 lowercase hex digits`);
  if (signedAt !== undefined && typeof signedAt !== "string") throw new TypeError(`"signedAt" expected a string`);
  const statement: Record<string, unknown> = {
    type: PACK_SIGNATURE_TYPE,
    version: PACK_SIGNATURE_VERSION,
    packDigest: digest,
  };
  if (signedAt !== undefined) statement["signedAt"] = signedAt;
  return canonicalBytes(statement);
}

/**
 * Sign a pack.
 * @param files path → bytes of every pack file (`.reach/signature`, if present, is ignored)
 * @param privateKey the signer's 32-byte private key seed
 * @param signedAt optional ISO 8601 UTC time with milliseconds; omitted unless given (never read from a clock)
 * @returns the signature document; write it to `.reach/signature` with {@link formatPackSignature}
 * @throws TypeError / RangeError for a bad key or `signedAt`; ReachError `PACK_MALFORMED` for a bad path
 * @example
 * ```ts
 * import { generateKeyPair } from "./keys.ts";
 * const files = new Map([["reach.json", new TextEncoder().encode("{}")]]);
 * const doc = signPack(files, generateKeyPair().privateKey);
 * console.log(formatPackSignature(doc)); // write it to <pack>/.reach/signature
 * ```
 */
export function signPack(files: PackFiles, privateKey: Uint8Array, signedAt?: string): PackSignatureDocument {
  const publicKey = publicKeyFromPrivateKey(privateKey);
  if (signedAt !== undefined && !PackSignatureDocumentSchema().shape.signedAt.safeParse(signedAt).success) {
    throw new RangeError(`"signedAt" expected an ISO 8601 UTC time with milliseconds such as 2026-01-01T00:00:00.000Z`);
  }
  const files_ = packListing(files);
  const digest = listingDigest(files_);
  const signature = signEd25519(packSignatureMessage(digest, signedAt), privateKey);
  return {
    algorithm: "Ed25519",
    digest: "SHA-256",
    signature: bytesToBase64(signature),
    publicKey: bytesToBase64(publicKey),
    ...(signedAt === undefined ? {} : { signedAt }),
    type: PACK_SIGNATURE_TYPE,
    version: PACK_SIGNATURE_VERSION,
    packDigest: digest,
    files: files_,
  };
}

/**
 * The text of `.reach/signature` (JSON, 2-space indented, trailing newline).
 * @param doc the signature document
 * @returns the file text
 * @example
 * ```ts
 * import { generateKeyPair } from "./keys.ts";
 * const text: string = formatPackSignature(signPack(new Map([["a.txt", new Uint8Array([1])]]), generateKeyPair().privateKey));
 * ```
 */
export function formatPackSignature(doc: PackSignatureDocument): string {
  return JSON.stringify(doc, null, 2) + "\n";
}

function invalid(message: string, details: ErrorDetailsData, cause?: unknown): ReachError {
  return new ReachError("PACK_INVALID_SIGNATURE", message, { details, cause });
}

/**
 * Read a `.reach/signature` document strictly.
 * @param input the file text or bytes (UTF-8), or an already parsed JSON value
 * @returns the document
 * @throws ReachError `PACK_INVALID_SIGNATURE` (with `details.check` = "format") when it is not a valid document
 * @example const doc = parsePackSignature(files.get(PACK_SIGNATURE_PATH)!);
 */
export function parsePackSignature(input: unknown): PackSignatureDocument {
  const hint = `remove ${PACK_SIGNATURE_PATH} and sign the pack again with \`reach-wasm pack sign <dir> --key FILE\``;
  let value = input;
  try {
    if (value instanceof Uint8Array) value = new TextDecoder("utf-8", { fatal: true }).decode(value);
    if (typeof value === "string") value = parseJsonText(value, "PACK_INVALID_SIGNATURE", PACK_SIGNATURE_PATH, hint);
    return parseDocument(PackSignatureDocumentSchema(), value, "PACK_INVALID_SIGNATURE", PACK_SIGNATURE_PATH, hint);
  } catch (err) {
    if (err instanceof ReachError) throw invalid(err.message, { ...err.details, check: "format" }, err);
    throw invalid(`${PACK_SIGNATURE_PATH} is not UTF-8 text; ${hint}`, { check: "format" }, err);
  }
}

/**
 * Verify a pack against its signature (seed 003 §5.4 "MUST verify signature before execution if present").
 * Checks, in order: the document's format; that its `files` listing hashes to its `packDigest`; the Ed25519
 * signature (strict RFC 8032) by its `publicKey`; that the pack's files are exactly the listed ones.
 * @param files path → bytes of every pack file (`.reach/signature`, if present, is ignored)
 * @param signature the signature document: text, UTF-8 bytes, or parsed JSON
 * @param trustStore optional trust store deciding `trusted`
 * @returns what was verified (`valid` is always true)
 * @throws ReachError `PACK_INVALID_SIGNATURE` naming the failed check in the message and in `details.check`
 * ("format", "listing", "signature", "files"; for "files" also `details.changed`, `added`, `removed`)
 * @example
 * ```ts
 * import { generateKeyPair } from "./keys.ts";
 * const files = new Map([["reach.json", new TextEncoder().encode("{}")]]);
 * const signature = signPack(files, generateKeyPair().privateKey);
 * const v = verifyPackSignature(files, signature); // throws PACK_INVALID_SIGNATURE when it does not verify
 * console.log(v.publicKey, v.trusted);
 * ```
 */
export function verifyPackSignature(files: PackFiles, signature: unknown, trustStore?: TrustStore): PackVerification {
  const actual = packListing(files);
  const doc = parsePackSignature(signature);
  const listed = listingDigest(doc.files);
  if (listed !== doc.packDigest) {
    throw invalid(
      `${PACK_SIGNATURE_PATH}: its "files" listing hashes to ${listed}, not to its "packDigest" ${doc.packDigest}; ` +
        `the signature file was altered: ${RESIGN}`,
      { check: "listing", expected: doc.packDigest, actual: listed },
    );
  }
  const publicKey = base64ToBytes(doc.publicKey);
  const publicKeyHex = bytesToHex(publicKey);
  const problem = publicKeyProblem(publicKey);
  if (problem !== undefined) {
    throw invalid(
      `${PACK_SIGNATURE_PATH}: "publicKey" ${problem}; sign the pack with a key made by \`reach-wasm keygen\``,
      {
        check: "signature",
        publicKey: publicKeyHex,
      },
    );
  }
  if (!verifyEd25519(base64ToBytes(doc.signature), packSignatureMessage(doc.packDigest, doc.signedAt), publicKey)) {
    throw invalid(
      `${PACK_SIGNATURE_PATH}: the Ed25519 signature does not verify with "publicKey" ${publicKeyHex}; the signature ` +
        `file was altered or made with a different key: ${RESIGN}`,
      { check: "signature", publicKey: publicKeyHex },
    );
  }
  const diff = compareListings(doc.files, actual);
  const digest = listingDigest(actual);
  if (diff.changed.length + diff.added.length + diff.removed.length > 0 || digest !== doc.packDigest) {
    const parts = [
      diff.changed.length > 0 ? `changed: ${diff.changed.join(", ")}` : "",
      diff.added.length > 0 ? `added: ${diff.added.join(", ")}` : "",
      diff.removed.length > 0 ? `removed: ${diff.removed.join(", ")}` : "",
    ].filter((p) => p !== "");
    throw invalid(
      `the pack's files do not match ${PACK_SIGNATURE_PATH} (pack digest ${digest}, signed ${doc.packDigest}); ` +
        `${parts.join("; ")}; ${RESIGN}`,
      { check: "files", expected: doc.packDigest, actual: digest, ...diff },
    );
  }
  const out: PackVerification = { valid: true, digest, publicKey: publicKeyHex, trusted: false };
  const name = trustStore?.nameOf(publicKeyHex);
  if (name !== undefined) {
    out.trusted = true;
    out.keyName = name;
  }
  if (doc.signedAt !== undefined) out.signedAt = doc.signedAt;
  return out;
}

/** Paths whose bytes differ, that are in the pack but not signed, and that are signed but missing; each sorted. */
function compareListings(
  signed: readonly PackFileEntry[],
  actual: readonly PackFileEntry[],
): { changed: string[]; added: string[]; removed: string[] } {
  const want = new Map(signed.map((e) => [e.path, e]));
  const have = new Map(actual.map((e) => [e.path, e]));
  const changed: string[] = [];
  const added: string[] = [];
  const removed: string[] = [];
  for (const e of actual) {
    const w = want.get(e.path);
    if (w === undefined) added.push(e.path);
    else if (w.sha256 !== e.sha256 || w.size !== e.size) changed.push(e.path);
  }
  for (const e of signed) if (!have.has(e.path)) removed.push(e.path);
  return { changed, added, removed };
}
