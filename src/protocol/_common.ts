/**
 * Shared building blocks for the protocol schemas (internal). Every pattern here is a JavaScript regular
 * expression that also compiles under JSON Schema's ECMA-262 dialect with the `u` flag (Ajv's default), so the
 * generated JSON Schemas and the zod schemas accept exactly the same strings.
 * @module
 */
import { z } from "zod";

/** `MAJOR.MINOR.PATCH` without leading zeros: a subset of the upstream pattern `^[0-9]+\.[0-9]+\.[0-9]+$` (seed 003 §5.2). */
export const SEMVER_RE: RegExp = /^(?:0|[1-9][0-9]*)\.(?:0|[1-9][0-9]*)\.(?:0|[1-9][0-9]*)$/;
/** Pack id, as in upstream `pack.schema.json` (seed 003 §5.1). */
export const IDENTIFIER_RE: RegExp = /^[a-zA-Z0-9._-]+$/;
/** Tool name: starts with a letter or digit, then letters, digits, `.`, `_`, `-` (e.g. `fs.read`, `text.upper`). */
export const TOOL_NAME_RE: RegExp = /^[a-zA-Z0-9][a-zA-Z0-9._-]*$/;
/** Lowercase UUID text (8-4-4-4-12). Any version: reach-wasm derives ids from hashes (seed 003 §3.3). */
export const UUID_RE: RegExp = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
/** A SHA-256 digest as reach-wasm writes it: 64 lowercase hex digits. */
export const SHA256_HEX_RE: RegExp = /^[a-f0-9]{64}$/;
/** Canonical padded base64 of 32 bytes (an Ed25519 public key). */
export const ED25519_PUBLIC_KEY_RE: RegExp = /^[A-Za-z0-9+/]{42}[AEIMQUYcgkosw048]=$/;
/** Canonical padded base64 of 64 bytes (an Ed25519 signature). */
export const ED25519_SIGNATURE_RE: RegExp = /^[A-Za-z0-9+/]{85}[AQgw]==$/;

// One path segment: printable ASCII except "/" and "\" (so that code-unit order equals byte order, which the
// capsule's lexicographic entry order relies on, ARCHITECTURE "Capsule").
const SEGMENT = String.raw`[ -.0-\[\]-~]+`;
const NO_DOT_SEGMENTS = String.raw`(?!(?:.*/)?\.{1,2}(?:/|$))`;
/** A normalized relative path: `/`-separated, no empty, `.` or `..` segment, no leading or trailing `/`. */
export const ENTRY_PATH_RE: RegExp = new RegExp(`^${NO_DOT_SEGMENTS}${SEGMENT}(?:/${SEGMENT})*$`);
/** A relative path inside a pack: an entry path, optionally written with a leading `./`. */
export const RELATIVE_PATH_RE: RegExp = new RegExp(`^(?:\\./)?${NO_DOT_SEGMENTS}${SEGMENT}(?:/${SEGMENT})*$`);

/** Protocol version string (seed 003 §5.2). */
export const semver = (): z.ZodString =>
  z.string().regex(SEMVER_RE, { error: "expected a version MAJOR.MINOR.PATCH such as 1.0.0" });

/** Identifier of packs, plans, steps (`^[a-zA-Z0-9._-]+$`, 1..128). */
export const identifier = (): z.ZodString =>
  z
    .string()
    .min(1)
    .max(128)
    .regex(IDENTIFIER_RE, { error: "expected 1-128 characters from a-z, A-Z, 0-9, '.', '_', '-'" });

/** A tool name (1..128). */
export const toolName = (): z.ZodString =>
  z
    .string()
    .min(1)
    .max(128)
    .regex(TOOL_NAME_RE, { error: "expected a tool name such as fs.read: letters, digits, '.', '_', '-'" });

/** A non-empty string of at most 256 characters (free-form ids such as envelope or session ids). */
export const nonEmpty = (): z.ZodString => z.string().min(1).max(256);

/**
 * Timestamp `YYYY-MM-DDTHH:mm:ss.sssZ`: ISO 8601 UTC with exactly three fraction digits (seed 003 §3.3
 * "Timestamp Normalization"). Used for every timestamp reach-wasm writes, hashed or not.
 */
export const timestamp = (): z.ZodISODateTime =>
  z.iso.datetime({
    precision: 3,
    error: "expected an ISO 8601 UTC timestamp with milliseconds, e.g. 1970-01-01T00:00:00.000Z",
  });

/** A lowercase UUID (format `uuid` in JSON Schema). */
export const uuid = (): z.ZodString =>
  z
    .string()
    .regex(UUID_RE, { error: "expected a lowercase UUID such as 00000000-0000-4000-8000-000000000000" })
    .meta({ format: "uuid" });

/** A SHA-256 digest, 64 lowercase hex digits. */
export const sha256Hex = (): z.ZodString =>
  z.string().regex(SHA256_HEX_RE, { error: "expected a SHA-256 digest: 64 lowercase hex digits" });

/** An Ed25519 public key, base64 (32 bytes). */
export const ed25519PublicKey = (): z.ZodString =>
  z
    .string()
    .regex(ED25519_PUBLIC_KEY_RE, { error: "expected an Ed25519 public key: 32 bytes in padded base64 (44 chars)" });

/** An Ed25519 signature, base64 (64 bytes). */
export const ed25519Signature = (): z.ZodString =>
  z
    .string()
    .regex(ED25519_SIGNATURE_RE, { error: "expected an Ed25519 signature: 64 bytes in padded base64 (88 chars)" });

/** A relative path inside a pack (`./` allowed; no absolute path, `..`, `\`, or empty segment). */
export const relativePath = (): z.ZodString =>
  z
    .string()
    .max(1024)
    .regex(RELATIVE_PATH_RE, {
      error: "expected a relative path such as tools/echo.wasm: '/'-separated, no leading '/', no '..', no '\\'",
    });

/** A normalized relative path (capsule entries, artifacts): no `./` prefix, no `.`/`..`/empty segment. */
export const entryPath = (): z.ZodString =>
  z
    .string()
    .max(1024)
    .regex(ENTRY_PATH_RE, {
      error: "expected a normalized relative path such as out/report.json: no leading '/', '.', '..' or '\\'",
    });

/**
 * What {@link entryPath} accepts, checked without zod.
 * @param path a candidate path
 * @returns whether it is a normalized relative path of at most 1024 characters
 * @example isEntryPath("out/report.json") // true
 */
export function isEntryPath(path: string): boolean {
  return path.length <= 1024 && ENTRY_PATH_RE.test(path);
}

/** A URI with a scheme (`workspace:///data/`, `memory://notes/`, `https://api.example.com/`); JSON Schema format `uri`. */
export const uriWithScheme = (): z.ZodURL =>
  z.url({ error: "expected an absolute URI with a scheme, e.g. workspace:///data/ or https://api.example.com/" });

/** A JSON object (JSON Schema `type: object`); values are not constrained. */
export const jsonObject = (): z.ZodRecord<z.ZodString, z.ZodUnknown> => z.record(z.string(), z.unknown());

/** True when all items are distinct (for arrays whose JSON Schema carries `uniqueItems`). */
export function distinct(items: readonly unknown[]): boolean {
  return new Set(items).size === items.length;
}

/** The type of a {@link strictObject}: a zod object of `shape` that rejects unknown keys. */
export type StrictObject<S extends z.core.$ZodLooseShape> = z.ZodObject<S, z.core.$strict>;

/**
 * A strict object (unknown keys rejected) whose unknown-key message names the object and lists the allowed
 * fields, so a typo in a hand-written document says how to fix it.
 * @param name what the object is, for messages ("reach.json", "manifest.policies")
 * @param shape the zod shape
 * @returns a zod strict object
 * @example strictObject("plan.risk", { level: z.int() })
 */
export function strictObject<T extends z.core.$ZodLooseShape>(name: string, shape: T): StrictObject<T> {
  const allowed = Object.keys(shape).join(", ");
  return z.strictObject(shape, {
    error: (iss) => {
      if (iss.code !== "unrecognized_keys") return undefined;
      const keys = iss.keys.map((k) => JSON.stringify(k)).join(", ");
      return `${name}: unknown field${iss.keys.length === 1 ? "" : "s"} ${keys}; remove ${
        iss.keys.length === 1 ? "it" : "them"
      } or use one of: ${allowed}`;
    },
  });
}
