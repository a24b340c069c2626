/**
 * The stored form of a host call on the tape (`tape.ts` documents the record format): record types, blob
 * extraction, refused and invalid requests, and the canonical text and hash of a request or outcome. Internal to
 * `src/record/`.
 * @module
 */
import { base64ToBytes } from "../canonical/mod.ts";
import { canonicalize, sortKeys } from "../canonical/mod.ts";
import { sha256Hex } from "../canonical/mod.ts";
import type { ErrorDetails } from "../protocol/mod.ts";


/** A JSON object on the tape. */
export type TapeJson = { [key: string]: unknown };

/** One recorded host call (see the module notes for the exact fields). */
export type TapeRecord = {
  seq: number;
  invocationId: string;
  op: string;
  request: TapeJson;
  response?: TapeJson;
  error?: ErrorDetails;
  requestHash: string;
  responseHash: string;
  /** The call's values are redacted (a committed tape without its `tape/<seq>.json`): nothing to play or show. */
  redacted?: true;
};

/** Decoded `data` sizes above this (bytes) go to the blob map: 4 KiB. */
export const BLOB_THRESHOLD = 4096;
/** A refused request whose canonical form is larger than this is stored as a hash and size only: 64 KiB. */
export const MAX_INLINE_REFUSED_BYTES = 65_536;
/** What a call ended with. */
export type TapeOutcome = { response: TapeJson } | { error: ErrorDetails };

const B64_RE = /^[A-Za-z0-9+/]*={0,2}$/;

/** Decoded byte length of a base64 string, or -1 when it is not standard padded base64. */
function base64Size(text: string): number {
  if (text.length % 4 !== 0 || !B64_RE.test(text)) return -1;
  const pad = text.endsWith("==") ? 2 : text.endsWith("=") ? 1 : 0;
  return (text.length / 4) * 3 - pad;
}

/**
 * Replace a large top-level `data` field by a blob reference.
 * @param value a request or response object
 * @param store called with (sha256, bytes) for every blob taken out
 * @returns the object to store (the input itself when nothing was replaced)
 * @example stripBlobs({ data: big }, (h, b) => blobs.set(h, b)) // { data: { blob: "…" } }
 */
export function stripBlobs(value: TapeJson, store?: (hash: string, bytes: Uint8Array) => void): TapeJson {
  const s = stripData(value);
  if (s === null) return value;
  store?.(s.blob[0], s.blob[1]);
  return s.value;
}

/** A blob taken out of a request or response: `[sha256, bytes]`. */
export type Blob = [hash: string, bytes: Uint8Array];

/** {@link stripBlobs} without a callback: null when nothing is replaced (the common case allocates nothing). */
export function stripData(value: TapeJson): { value: TapeJson; blob: Blob } | null {
  const data = value["data"];
  if (typeof data !== "string" || data.length <= (BLOB_THRESHOLD * 4) / 3) return null;
  const size = base64Size(data);
  if (size <= BLOB_THRESHOLD) return null;
  let bytes: Uint8Array;
  try {
    bytes = base64ToBytes(data);
  } catch {
    return null; // non-canonical padding: not a body we produced or accept; stored inline
  }
  const hash = sha256Hex(bytes);
  return { value: { ...value, data: { blob: hash } }, blob: [hash, bytes] };
}

/**
 * A request in its stored form, as the recorder and player see it. A successful call's large `data` becomes a blob
 * reference; a refused call's request is stored inline (never blobbed), or as `{"$oversize": …}` when its canonical
 * form is over 64 KiB; a non-JSON request as `{"$invalid": reason}`.
 * @param request what the tool sent
 * @param refused whether the call failed
 * @returns the stored form, its canonical text and the blobs taken out
 * @example storedRequest({ path: "a" }, false).text // '{"path":"a"}'
 */
export function storedRequest(
  request: unknown,
  refused: boolean,
): { value: TapeJson; text: string; blobs: [string, Uint8Array][] } {
  const blobs: [string, Uint8Array][] = [];
  let value: TapeJson;
  let text: string;
  try {
    if (typeof request !== "object" || request === null || Array.isArray(request)) throw new TypeError("not a JSON object");
    value = request as TapeJson;
    if (!refused) {
      const s = stripData(value);
      if (s !== null) {
        value = s.value;
        blobs.push(s.blob);
      }
    }
    text = canonicalize(value);
  } catch (err) {
    value = { $invalid: err instanceof Error ? clipOp(err.message, 200) : "not JSON" };
    return { value, text: canonicalize(value), blobs: [] };
  }
  if (refused && text.length > MAX_INLINE_REFUSED_BYTES) {
    value = oversize(text);
    return { value, text: canonicalize(value), blobs: [] };
  }
  return { value, text, blobs };
}

/** The stored form of a refused request whose canonical text is over {@link MAX_INLINE_REFUSED_BYTES}. */
export function oversize(text: string): TapeJson {
  return { $oversize: { sha256: sha256Hex(text), size: text.length } };
}

/**
 * Hashes of short request and response texts: most calls repeat a few requests (`{}` for `clock.now`, `{"n":8}`, …),
 * and a run's invocations often get the same small answers (`{}` from `log`, `fs.write`'s `{"size":…}`, a clock read
 * at the same virtual time in every run of a pack).
 */
const textHashes = new Map<string, string>();
const MAX_CACHED_TEXT_CHARS = 256;
const MAX_CACHED_TEXTS = 1024;

/** `sha256Hex(text)`, remembered for short texts (the digest of a text never changes, so this is invisible). */
export function textHash(text: string): string {
  if (text.length > MAX_CACHED_TEXT_CHARS) return sha256Hex(text);
  let hash = textHashes.get(text);
  if (hash === undefined) {
    if (textHashes.size >= MAX_CACHED_TEXTS) textHashes.clear();
    hash = sha256Hex(text);
    textHashes.set(text, hash);
  }
  return hash;
}

const isWellFormed: (s: string) => boolean = (() => {
  const native = (String.prototype as { isWellFormed?: (this: string) => boolean }).isWellFormed;
  if (typeof native === "function") return (s: string) => native.call(s);
  const lone = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
  return (s: string) => !lone.test(s);
})();

/** Most members {@link flatCanonical} handles (host responses have a few). */
const MAX_FLAT_MEMBERS = 16;

/**
 * `canonicalize(value)` and `JSON.parse` of it, for a small flat object that the host made itself (every value a
 * well-formed string, finite number, boolean or null; plain data, no getters), with one native `JSON.stringify`.
 * The copy's members are inserted in RFC 8785 order (§3.2.3: UTF-16 code units), and `JSON.stringify` writes
 * well-formed strings and finite numbers exactly as RFC 8785 does (§3.2.2.2, §3.2.2.3; `-0` as `0`, which the copy
 * holds as `0`, as `JSON.parse` would). Null, for the caller to take the general path, when any of that does not
 * hold, or when a name starts with a digit (JavaScript orders array-index names first, so insertion order would not
 * be the text's order) or is `__proto__` (assigning it would set the prototype).
 */
export function flatCanonical(value: TapeJson): { copy: TapeJson; text: string } | null {
  const keys = Object.keys(value);
  const n = keys.length;
  if (n > MAX_FLAT_MEMBERS) return null;
  sortKeys(keys);
  const copy: TapeJson = {};
  for (let i = 0; i < n; i++) {
    const k = keys[i]!;
    const first = k.charCodeAt(0);
    if ((first >= 48 && first <= 57) || k === "__proto__" || !isWellFormed(k)) return null;
    let v = value[k];
    switch (typeof v) {
      case "number":
        if (!Number.isFinite(v)) return null;
        if (v === 0) v = 0;
        break;
      case "string":
        if (!isWellFormed(v)) return null;
        break;
      case "boolean":
        break;
      default:
        if (v !== null) return null;
    }
    copy[k] = v;
  }
  return { copy, text: JSON.stringify(copy) };
}

/** An op name that {@link clipOp} returns unchanged (every real host op is one): no escaping, no clipping. */
const PLAIN_OP = /^[A-Za-z0-9._-]{1,64}$/;

/** An op name as the tape stores it: a real op unchanged; anything else printable and at most `max` characters. */
export function clipOp(op: unknown, max = 64): string {
  if (typeof op === "string" && op.length <= max && PLAIN_OP.test(op)) return op;
  const s = typeof op === "string" ? op : `<${typeof op}>`;
  // eslint-disable-next-line no-control-regex -- escaping control characters is the point
  const clean = s.replace(/[\u0000-\u001f\u007f]|\p{Surrogate}/gu, "?");
  return clean.length <= max ? clean : clean.slice(0, max) + "…";
}

export const NO_BLOBS: readonly Blob[] = Object.freeze([]);

/** The stored form of a call's outcome: a response with its large `data` taken out, or the error; and its text. */
export function outcomeText(outcome: TapeOutcome): { value: TapeJson; text: string; blob: Blob | null } {
  let value: TapeJson;
  let blob: Blob | null = null;
  if ("response" in outcome) {
    const s = stripData(outcome.response);
    value = s === null ? outcome.response : s.value;
    if (s !== null) blob = s.blob;
  } else {
    value = outcome.error as unknown as TapeJson;
  }
  return { value, text: canonicalize(value), blob };
}
