/**
 * The text of secrets (`secrets.ts`): the placeholder a tool writes, `{{secret:NAME}}`, how it is found in a URL, a
 * header value or a body, and the "binary strings" (one character per byte, 0–255) the box works on, so a value is
 * found in any body, text or not.
 * @module
 */
import { SECRET_NAME_RE } from "../../protocol/mod.ts";

/** Placeholders in text: `{{secret:NAME}}`, also as the URL parser writes it in a path (`%7B%7B…%7D%7D`). */
export const PLACEHOLDER = /(?:\{\{|%7[Bb]%7[Bb])secret:([A-Za-z_][A-Za-z0-9_]{0,63})(?:\}\}|%7[Dd]%7[Dd])/g;

/**
 * The placeholder a tool writes for a secret.
 * @param name the secret's name
 * @returns `{{secret:NAME}}`
 * @example secretPlaceholder("API_TOKEN") // "{{secret:API_TOKEN}}"
 */
export function secretPlaceholder(name: string): string {
  return `{{secret:${name}}}`;
}

/**
 * Bytes as a binary string (one character per byte).
 * @param bytes the bytes
 * @returns the string
 */
export function bytesToBinary(bytes: Uint8Array): string {
  let out = "";
  for (let i = 0; i < bytes.length; i += 8192) out += String.fromCharCode(...bytes.subarray(i, i + 8192));
  return out;
}

/**
 * A binary string as bytes.
 * @param text one character per byte (0–255)
 * @returns the bytes
 */
export function binaryToBytes(text: string): Uint8Array {
  const out = new Uint8Array(text.length);
  for (let i = 0; i < text.length; i++) out[i] = text.charCodeAt(i) & 0xff;
  return out;
}

/**
 * The names a text's placeholders name, in order of first appearance.
 * @param text a URL, header value or body (binary string)
 * @returns the names
 * @example placeholderNames("Bearer {{secret:TOKEN}}") // ["TOKEN"]
 */
export function placeholderNames(text: string): string[] {
  const out: string[] = [];
  for (const m of text.matchAll(PLACEHOLDER)) if (!out.includes(m[1]!)) out.push(m[1]!);
  return out;
}

/**
 * Whether a name is a valid secret name.
 * @param name a name
 * @returns true for `[A-Za-z_][A-Za-z0-9_]{0,63}`
 */
export function isSecretName(name: string): boolean {
  return SECRET_NAME_RE.test(name);
}
