// An independent re-implementation of conformance/HASHING.md (node:crypto and a few lines of key sorting, no
// reach-wasm code) that recomputes the committed hash-chain vectors, so they are not merely self-consistent.
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";

const sha = (s: string) => createHash("sha256").update(s, "utf8").digest("hex");
// Enough of RFC 8785 for these vectors: sorted keys (UTF-16 order is JS's default sort), JSON.stringify leaves.
const jcs = (v: unknown): string =>
  Array.isArray(v)
    ? `[${v.map(jcs).join(",")}]`
    : v !== null && typeof v === "object"
      ? `{${Object.keys(v).sort().map((k) => `${JSON.stringify(k)}:${jcs((v as Record<string, unknown>)[k])}`).join(",")}}`
      : JSON.stringify(v);
const uuid = (hex: string) => {
  const b = Buffer.from(hex.slice(0, 32), "hex");
  b[6] = (b[6]! & 0x0f) | 0x80;
  b[8] = (b[8]! & 0x3f) | 0x80;
  const h = b.toString("hex");
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
};

for (const name of ["success", "failure"]) {
  describe(`independent check of vectors/hash-chain/${name}`, () => {
    const dir = new URL("../vectors/hash-chain/", import.meta.url);
    const lines = readFileSync(new URL(`${name}.events.jsonl`, dir), "utf8").split("\n");
    const expected = JSON.parse(readFileSync(new URL(`${name}.expected.json`, dir), "utf8"));
    it("recomputes every payloadHash, eventHash, eventId and the runHash", () => {
      expect(lines.pop()).toBe("");
      let prev = "0".repeat(64);
      const hashes: string[] = [];
      lines.forEach((line, i) => {
        const e = JSON.parse(line);
        expect(jcs(e), `line ${i} is canonical`).toBe(line);
        const payloadHash = sha(jcs(e.payload));
        const eventHash = sha(e.type + e.timestamp + payloadHash + prev);
        expect([e.payloadHash, e.prevEventHash, e.eventHash, e.eventId, e.sequence]).toEqual([payloadHash, prev, eventHash, uuid(eventHash), i]);
        expect([expected.events[i].payloadHash, expected.events[i].eventHash]).toEqual([payloadHash, eventHash]);
        prev = eventHash;
        hashes.push(eventHash);
      });
      expect(sha(hashes.join(""))).toBe(expected.runHash);
    });
  });
}
