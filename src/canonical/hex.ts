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

/**
 * Encode bytes as standard base64 with padding (RFC 4648 §4).
 * @param bytes the bytes to encode
 * @returns base64 text
 * @example bytesToBase64(new TextEncoder().encode("hi")) // "aGk="
 */
export function bytesToBase64(bytes: Uint8Array): string {
  let out = "";
  let i = 0;
  for (; i + 2 < bytes.length; i += 3) {
    const n = (bytes[i]! << 16) | (bytes[i + 1]! << 8) | bytes[i + 2]!;
    out += B64[n >> 18]! + B64[(n >> 12) & 63]! + B64[(n >> 6) & 63]! + B64[n & 63]!;
  }
  const rest = bytes.length - i;
  if (rest === 1) {
    const n = bytes[i]! << 16;
    out += B64[n >> 18]! + B64[(n >> 12) & 63]! + "==";
  } else if (rest === 2) {
    const n = (bytes[i]! << 16) | (bytes[i + 1]! << 8);
    out += B64[n >> 18]! + B64[(n >> 12) & 63]! + B64[(n >> 6) & 63]! + "=";
  }
  return out;
}

/**
 * Decode standard, padded base64 strictly (no whitespace, no URL alphabet, canonical padding bits).
 * @param text base64 text
 * @returns the decoded bytes
 * @throws TypeError when the text is not canonical padded base64
 * @example base64ToBytes("aGk=") // bytes of "hi"
 */
export function base64ToBytes(text: string): Uint8Array {
  if (typeof text !== "string" || text.length % 4 !== 0 || !/^[A-Za-z0-9+/]*={0,2}$/.test(text)) {
    throw new TypeError(`"base64" expected padded standard base64 text, got ${describe(text)}`);
  }
  const pad = text.endsWith("==") ? 2 : text.endsWith("=") ? 1 : 0;
  const out = new Uint8Array((text.length / 4) * 3 - pad);
  let o = 0;
  for (let i = 0; i < text.length; i += 4) {
    const c = [0, 1, 2, 3].map((k) => (text[i + k] === "=" ? 0 : B64.indexOf(text[i + k]!)));
    const n = (c[0]! << 18) | (c[1]! << 12) | (c[2]! << 6) | c[3]!;
    if (o < out.length) out[o++] = n >> 16;
    if (o < out.length) out[o++] = (n >> 8) & 255;
    if (o < out.length) out[o++] = n & 255;
  }
  if (bytesToBase64(out) !== text) {
    throw new TypeError(`"base64" has non-canonical padding bits; re-encode it with a standard encoder`);
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
