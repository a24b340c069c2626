import { describe, expect, it } from "vitest";
import { bytesToHex } from "./hex.ts";
import { utf8 } from "./sha256.ts";
import { commitKey, hmacSha256, valueCommit, valueSalt } from "./commit.ts";

describe("salted value commitments (conformance/HASHING.md \"Value commitments\")", () => {
  it("HMAC-SHA256 gives RFC 4231's vectors (short key, and a key longer than a block)", () => {
    expect(bytesToHex(hmacSha256(utf8("Jefe"), utf8("what do ya want for nothing?")))).toBe("5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
    expect(bytesToHex(hmacSha256(new Uint8Array(131).fill(0xaa), utf8("Test Using Larger Than Block-Size Key - Hash Key First")))).toBe("60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54");
  });
  it("gives HASHING.md's vector", () => {
    const key = commitKey("42");
    expect(bytesToHex(key)).toBe("0b62cd5b69fbfbbb9f71992d7962adf02e4c326bd3e1f4e82a7643bc3c69171f");
    const salt = valueSalt(key, "invocation/00000000-0000-8000-8000-000000000000/output");
    expect(salt).toBe("dc289b40fd1c35575e2c79a76d4cffb5");
    expect(valueCommit(salt, { answer: "yes" })).toBe("b413eb6f83640a10f5272298d2e5cf24bb1dcff5cdc308acb4cd8bce0167fdf2");
  });
  it("a different salt or value gives a different commitment", () => {
    expect(valueCommit("00".repeat(16), "yes")).not.toBe(valueCommit("01".repeat(16), "yes"));
    expect(valueCommit("00".repeat(16), "yes")).not.toBe(valueCommit("00".repeat(16), "no"));
  });
});
