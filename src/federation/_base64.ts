/**
 * Fast base64 for the byte payloads of federation messages (packs, capsules, run files), on the runtime's native
 * `btoa`/`atob` (web standard). Decoding is strict about the alphabet and padding; the text itself is covered by the
 * message signature, so there is no second form to worry about.
 * @module
 */
import { ReachError } from "../protocol/errors.ts";

const CHUNK = 0x8000;
const B64_RE = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/**
 * Encode bytes as padded standard base64.
 * @param bytes the bytes
 * @returns the text
 * @throws never
 * @example encodeBase64(new Uint8Array([104, 105])) // "aGk="
 */
export function encodeBase64(bytes: Uint8Array): string {
  let binary = "";
  for (let i = 0; i < bytes.length; i += CHUNK) binary += String.fromCharCode(...bytes.subarray(i, i + CHUNK));
  return btoa(binary);
}

/**
 * Decode padded standard base64 strictly.
 * @param text the text
 * @param what how to name it in the error
 * @returns the bytes
 * @throws ReachError `PROTO_INVALID_MESSAGE` when the text is not padded standard base64
 * @example decodeBase64("aGk=", "pack") // Uint8Array [104, 105]
 */
export function decodeBase64(text: string, what: string): Uint8Array {
  if (typeof text !== "string" || !B64_RE.test(text)) throw new ReachError("PROTO_INVALID_MESSAGE", `${what} is not padded standard base64`);
  const binary = atob(text);
  const out = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) out[i] = binary.charCodeAt(i);
  return out;
}
