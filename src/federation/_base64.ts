/**
 * Base64 of the byte payloads of federation messages (packs, capsules, run files): the one strict codec
 * (`src/canonical/hex.ts`), its refusal said as a refusal of the message.
 * @module
 */
import { base64ToBytes } from "../canonical/mod.ts";
import { ReachError } from "../protocol/mod.ts";

export { bytesToBase64 as encodeBase64 } from "../canonical/mod.ts";

/**
 * Decode padded standard base64 strictly.
 * @param text the text
 * @param what how to name it in the error
 * @returns the bytes
 * @throws ReachError `PROTO_INVALID_MESSAGE` when the text is not padded standard base64
 * @example decodeBase64("aGk=", "pack") // Uint8Array [104, 105]
 */
export function decodeBase64(text: string, what: string): Uint8Array {
  try {
    return base64ToBytes(text);
  } catch {
    throw new ReachError("PROTO_INVALID_MESSAGE", `${what} is not padded standard base64`);
  }
}
