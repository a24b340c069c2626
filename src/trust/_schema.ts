/**
 * Shared helpers of `src/trust/` (internal): hex field schemas, a strict object whose unknown-key message lists the
 * allowed fields, and JSON text parsing that fails with a `ReachError` saying how to fix the document.
 * @module
 */
import { z } from "zod";
import { ReachError } from "../protocol/mod.ts";
import type { ErrorCode } from "../protocol/mod.ts";
import { parseOrThrow } from "../protocol/mod.ts";

/** 64 lowercase hex digits: an Ed25519 public key or seed, or a SHA-256 digest. */
export const HEX32_RE: RegExp = /^[0-9a-f]{64}$/;
/** 128 lowercase hex digits: an Ed25519 signature. */
export const HEX64_RE: RegExp = /^[0-9a-f]{128}$/;

/** Longest JSON text accepted for a key file, a trust store or a signature document (a guard, not a format rule). */
export const MAX_DOCUMENT_CHARS = 4 * 1024 * 1024;

/**
 * A string of 32 bytes as 64 lowercase hex digits.
 * @param what what the value is, for the message ("an Ed25519 public key")
 * @returns a zod string schema
 */
export const hex32 = (what: string): z.ZodString =>
  z.string().regex(HEX32_RE, { error: `expected ${what}: 32 bytes as 64 lowercase hex digits` });

/**
 * A string of 64 bytes as 128 lowercase hex digits.
 * @param what what the value is, for the message ("an Ed25519 signature")
 * @returns a zod string schema
 */
export const hex64 = (what: string): z.ZodString =>
  z.string().regex(HEX64_RE, { error: `expected ${what}: 64 bytes as 128 lowercase hex digits` });

/** The protocol's strict object (unknown keys named with the allowed ones), re-exported for this folder. */
export { entryPath, isEntryPath, sha256Hex, strictObject } from "../protocol/mod.ts";

/**
 * Parse JSON text of a trust document, or throw a `ReachError` with `code` that says what the text should be.
 * @param text the untrusted text
 * @param code the error code
 * @param what what the document is ("private key file")
 * @param hint how to obtain a good one, appended to the message
 * @returns the parsed JSON value
 * @throws ReachError with `code` when `text` is not a string, too large, or not JSON
 */
export function parseJsonText(text: unknown, code: ErrorCode, what: string, hint: string): unknown {
  if (typeof text !== "string") {
    throw new ReachError(code, `${what}: expected JSON text, got ${typeof text}; ${hint}`);
  }
  if (text.length > MAX_DOCUMENT_CHARS) {
    throw new ReachError(
      code,
      `${what}: ${text.length} characters is too large (limit ${MAX_DOCUMENT_CHARS}); ${hint}`,
    );
  }
  try {
    return JSON.parse(text) as unknown;
  } catch (err) {
    const reason = err instanceof Error ? err.message : String(err);
    throw new ReachError(code, `${what} is not valid JSON (${reason}); ${hint}`, { cause: err });
  }
}

/**
 * Validate a parsed document, adding `hint` to the message of the `ReachError` thrown on failure.
 * @param schema the zod schema
 * @param value the parsed JSON value
 * @param code the error code
 * @param what what the document is, for the message
 * @param hint how to fix it
 * @returns the parsed value
 * @throws ReachError with `code` and `details.issues`
 */
export function parseDocument<S extends z.ZodType>(
  schema: S,
  value: unknown,
  code: ErrorCode,
  what: string,
  hint: string,
): z.output<S> {
  try {
    return parseOrThrow(schema, value, code, what);
  } catch (err) {
    if (!(err instanceof ReachError)) throw err;
    throw new ReachError(code, `${err.message}\n${hint}`, { details: err.details, cause: err });
  }
}

/** The `type` field of a parsed JSON value, when it is an object with a string `type`. */
export function typeField(value: unknown): string | undefined {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return undefined;
  const type = (value as Record<string, unknown>)["type"];
  return typeof type === "string" ? type : undefined;
}
