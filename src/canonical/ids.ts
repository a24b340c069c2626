/**
 * Deterministic, UUID-formatted identifiers derived from hashes (seed 003 §3.3: "Random IDs … MUST NOT appear in
 * hashed payloads"). runId, eventId, invocationId and friends are computed from what they identify, so a replay
 * produces the same ids. Web-standard only.
 * @module
 */
import { bytesToHex, describe } from "./hex.ts";
import { canonicalize } from "./jcs.ts";
import { sha256 } from "./sha256.ts";

/**
 * Format the first 16 bytes of a digest as an RFC 9562 version 8 ("custom") UUID.
 *
 * Exactly: take bytes `b[0..16)`; set `b[6] = (b[6] & 0x0f) | 0x80` (version nibble 8) and
 * `b[8] = (b[8] & 0x3f) | 0x80` (variant bits `10`); write the 16 bytes as 32 lowercase hex digits grouped
 * 8-4-4-4-12 with `-`. The other 122 bits are the digest's, unchanged. Bytes past the 16th are ignored.
 * @param digest at least 16 bytes, normally a 32-byte SHA-256 digest; it is not modified
 * @returns a lowercase UUID string such as `"ba7816bf-8f01-8fea-8141-40de5dae2223"`
 * @throws TypeError when `digest` is not a Uint8Array
 * @throws RangeError when `digest` has fewer than 16 bytes
 * @example uuidFromDigest(sha256("abc")) // "ba7816bf-8f01-8fea-8141-40de5dae2223"
 */
export function uuidFromDigest(digest: Uint8Array): string {
  if (!(digest instanceof Uint8Array)) {
    throw new TypeError(`"digest" expected a Uint8Array of at least 16 bytes, got ${describe(digest)}`);
  }
  if (digest.length < 16) {
    throw new RangeError(`"digest" expected a Uint8Array of at least 16 bytes, got length=${digest.length}`);
  }
  const b = digest.slice(0, 16);
  b[6] = (b[6]! & 0x0f) | 0x80;
  b[8] = (b[8]! & 0x3f) | 0x80;
  const h = bytesToHex(b);
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20, 32)}`;
}

/** 1 at the char codes of `0-9a-f`. */
const LOWER_HEX = (() => {
  const table = new Uint8Array(128);
  for (let d = 0; d < 16; d++) table["0123456789abcdef".charCodeAt(d)] = 1;
  return table;
})();

/** `/^[0-9a-f]{32}/.test(s)`, without a regex call (this runs once per recorded event). */
function startsWithHex32(s: string): boolean {
  if (s.length < 32) return false;
  for (let i = 0; i < 32; i++) {
    const c = s.charCodeAt(i);
    if (c >= 128 || LOWER_HEX[c] === 0) return false;
  }
  return true;
}

/** Variant digit for each lowercase hex digit's char code: `(digit & 0x3) | 0x8`, as a hex character. */
const VARIANT: readonly string[] = (() => {
  const table: string[] = [];
  for (let d = 0; d < 16; d++) table["0123456789abcdef".charCodeAt(d)] = "89ab"[d & 0x3]!;
  return table;
})();

/**
 * `uuidFromDigest` for a digest given as hex (the form reach-wasm stores hashes in): same result, no byte copy.
 * @param hex at least 32 hex digits, normally a 64-digit SHA-256 hex digest (lowercase)
 * @returns the version 8 UUID of its first 16 bytes
 * @throws TypeError when `hex` does not start with 32 lowercase hex digits
 * @example uuidFromHex(sha256Hex("abc")) // "ba7816bf-8f01-8fea-8141-40de5dae2223"
 */
export function uuidFromHex(hex: string): string {
  if (typeof hex !== "string" || !startsWithHex32(hex)) {
    throw new TypeError(`"hex" expected at least 32 lowercase hex digits, got ${describe(hex)}`);
  }
  const id =
    hex.slice(0, 8) + "-" + hex.slice(8, 12) + "-8" + hex.slice(13, 16) + "-" + VARIANT[hex.charCodeAt(16)]! +
    hex.slice(17, 20) + "-" + hex.slice(20, 32);
  // `trim` changes nothing here (there is no whitespace), but V8 returns the concatenation as one flat string:
  // event logs keep every eventId, and flat it is a sixth of the memory and of the garbage collector's work.
  return id.trim();
}

/**
 * Derive a deterministic UUID from a namespace and zero or more string parts.
 *
 * Exactly: `uuidFromDigest(SHA-256(UTF-8(JCS([namespace, ...parts]))))`, where JCS is RFC 8785 (`canonicalize`),
 * so the hashed text is a JSON array of strings such as `["reach/event","run-1","7"]`. Encoding the parts as a
 * JSON array keeps them unambiguous (`("a","bc")` and `("ab","c")` differ). Use a distinct namespace per kind of
 * id (for example `"reach/run"`, `"reach/event"`) so that ids of different kinds never collide. Numbers must be
 * passed as strings (decide their format at the call site, for example `String(seq)`).
 * @param namespace a non-empty string naming the kind of id
 * @param parts the strings that identify the thing (each must be well-formed UTF-16)
 * @returns a lowercase RFC 9562 version 8 UUID string
 * @throws TypeError when `namespace` is not a non-empty string, when a part is not a string, or when any of them
 *   contains a lone surrogate
 * @example deriveId("reach/event", runId, String(seq)) // "xxxxxxxx-xxxx-8xxx-[89ab]xxx-xxxxxxxxxxxx"
 */
export function deriveId(namespace: string, ...parts: string[]): string {
  if (typeof namespace !== "string" || namespace.length === 0) {
    throw new TypeError(`"namespace" expected a non-empty string, got ${describe(namespace)}`);
  }
  for (let i = 0; i < parts.length; i++) {
    if (typeof parts[i] !== "string") {
      throw new TypeError(`"parts[${i}]" expected a string, got ${describe(parts[i])}; convert numbers with String()`);
    }
  }
  let text: string;
  try {
    text = canonicalize([namespace, ...parts]);
  } catch (err) {
    // canonicalize names the array path ($[0] is the namespace, $[i+1] is parts[i]); restate it in argument terms.
    const m = err instanceof TypeError ? /at \$\[(\d+)\]/.exec(err.message) : null;
    if (m) {
      const idx = Number(m[1]);
      const arg = idx === 0 ? '"namespace"' : `"parts[${idx - 1}]"`;
      throw new TypeError(`${arg} contains a lone UTF-16 surrogate; pass well-formed strings`, { cause: err });
    }
    throw err;
  }
  return uuidFromDigest(sha256(text));
}
