import { describe, expect, it } from "vitest";
import { decodeBase64, encodeBase64 } from "./_base64.ts";

describe("federation base64", () => {
  it("carries a payload of several MiB (a pack or a capsule) both ways", () => {
    const bytes = new Uint8Array(6 * 1024 * 1024 + 1).map((_, i) => (i * 2654435761) >>> 24);
    const text = encodeBase64(bytes);
    const back = decodeBase64(text, "the run request: pack");
    expect(back.length).toBe(bytes.length);
    expect(back.every((b, i) => b === bytes[i])).toBe(true); // (toEqual walks 6 MiB too slowly)
  });

  it("refuses text that is not padded standard base64 as a malformed message", () => {
    for (const bad of ["aGk", "aGk=\n", "a-k=", "aGl=", 42 as unknown as string]) {
      expect(() => decodeBase64(bad, "the run request: pack")).toThrow(expect.objectContaining({ code: "PROTO_INVALID_MESSAGE", message: "the run request: pack is not padded standard base64" }));
    }
  });
});
