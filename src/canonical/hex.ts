/**
 * Hex and base64 encoding helpers used on hashed paths. Web-standard only.
 * @module
 */

const HEX = "0123456789abcdef";
const BYTE_TO_HEX: string[] = Array.from({ length: 256 }, (_, i) => HEX[i >> 4]! + HEX[i & 15]!);

/**
 * Encode bytes as lowercase hex.
 * @param bytes the bytes to encode
 * @returns lowercase hex string, two characters per byte
 * @example
 * ```ts
 * const hex: string = bytesToHex(new Uint8Array([0, 255])); // "00ff"
 * ```
 */
export function bytesToHex(bytes: Uint8Array): string {
  let out = "";
  for (let i = 0; i < bytes.length; i++) out += BYTE_TO_HEX[bytes[i]!];
  return out;
}

/**
 * Decode a hex string (either case) into bytes.
 * @param hex an even-length string of hex digits
 * @returns the decoded bytes
 * @throws TypeError when the string is not even-length hex
 * @example
 * ```ts
 * const bytes: Uint8Array = hexToBytes("00ff"); // Uint8Array [0, 255]
 * ```
 */
export function hexToBytes(hex: string): Uint8Array {
  if (typeof hex !== "string" || hex.length % 2 !== 0 || !/^[0-9a-fA-F]*$/.test(hex)) {
    throw new TypeError(`"hex" expected an even-length string of hex digits, got ${describe(hex)}`);
  }
  const out = new Uint8Array(hex.length / 2);
  for (let i = 0; i < out.length; i++) out[i] = parseInt(hex.slice(i * 2, i * 2 + 2), 16);
  return out;
}

/** True when `s` is 64 lowercase hex digits (a SHA-256 digest as written by reach-wasm). */
export function isSha256Hex(s: unknown): s is string {
  return typeof s === "string" && s.length === 64 && /^[0-9a-f]{64}$/.test(s);
}

const B64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
const B64_CODES = new TextEncoder().encode(B64);
const B64_DECODE = (() => {
  const t = new Int8Array(128).fill(-1);
  for (let i = 0; i < 64; i++) t[B64.charCodeAt(i)] = i;
  return t;
})();
const EQ = 61; // "="
const ASCII = new TextDecoder();

/**
 * Encode bytes as standard base64 with padding (RFC 4648 §4).
 * @param bytes the bytes to encode
 * @returns base64 text
 * @example bytesToBase64(new TextEncoder().encode("hi")) // "aGk="
 */
export function bytesToBase64(bytes: Uint8Array): string {
  const n = bytes.length;
  const out = new Uint8Array(Math.ceil(n / 3) * 4);
  let o = 0;
  let i = 0;
  for (; i + 2 < n; i += 3) {
    const v = (bytes[i]! << 16) | (bytes[i + 1]! << 8) | bytes[i + 2]!;
    out[o++] = B64_CODES[v >> 18]!;
    out[o++] = B64_CODES[(v >> 12) & 63]!;
    out[o++] = B64_CODES[(v >> 6) & 63]!;
    out[o++] = B64_CODES[v & 63]!;
  }
  const rest = n - i;
  if (rest > 0) {
    const v = (bytes[i]! << 16) | (rest === 2 ? bytes[i + 1]! << 8 : 0);
    out[o++] = B64_CODES[v >> 18]!;
    out[o++] = B64_CODES[(v >> 12) & 63]!;
    out[o++] = rest === 2 ? B64_CODES[(v >> 6) & 63]! : EQ;
    out[o++] = EQ;
  }
  return ASCII.decode(out); // one flat string (concatenating per group built a rope of millions of pieces)
}

/**
 * Decode standard, padded base64 strictly (no whitespace, no URL alphabet, canonical padding bits).
 * @param text base64 text
 * @returns the decoded bytes
 * @throws TypeError when the text is not canonical padded base64
 * @example base64ToBytes("aGk=") // bytes of "hi"
 */
export function base64ToBytes(text: string): Uint8Array {
  const bad = (): TypeError => new TypeError(`"base64" expected padded standard base64 text, got ${describe(text)}`);
  if (typeof text !== "string" || text.length % 4 !== 0) throw bad();
  const len = text.length;
  const pad = len > 0 && text.charCodeAt(len - 1) === EQ ? (text.charCodeAt(len - 2) === EQ ? 2 : 1) : 0;
  const out = new Uint8Array((len / 4) * 3 - pad);
  const code = (k: number): number => {
    const ch = text.charCodeAt(k);
    const v = ch < 128 ? B64_DECODE[ch]! : -1;
    if (v < 0) throw bad();
    return v;
  };
  let o = 0;
  for (let i = 0; i < len; i += 4) {
    const last = i + 4 === len;
    const a = code(i);
    const b = code(i + 1);
    const c = last && pad === 2 ? 0 : code(i + 2);
    const d = last && pad >= 1 ? 0 : code(i + 3);
    const v = (a << 18) | (b << 12) | (c << 6) | d;
    out[o++] = v >> 16;
    if (o < out.length) out[o++] = (v >> 8) & 255;
    if (o < out.length) out[o++] = v & 255;
    if (last && ((pad === 2 && (b & 15) !== 0) || (pad === 1 && (c & 3) !== 0))) {
      throw new TypeError(`"base64" has non-canonical padding bits; re-encode it with a standard encoder`);
    }
  }
  return out;
}

/** Short description of a bad argument for error messages (never echoes long input). */
export function describe(value: unknown): string {
  if (typeof value === "string") return `string of length ${value.length}`;
  if (value === null) return "null";
  if (value instanceof Uint8Array) return `Uint8Array of length ${value.length}`;
  return typeof value;
}
