import { describe, expect, it } from "vitest";
import { recordedCommitments } from "./capsule.ts";

describe("recordedCommitments (request.json's value-commitment scheme)", () => {
  it("absent is the previous format; salted-v1 is today's", () => {
    expect(recordedCommitments({})).toBeNull();
    expect(recordedCommitments({ commitments: "salted-v1" })).toBe("salted-v1");
  });

  it("a scheme this build does not know is PROTO_VERSION_MISMATCH naming it; a non-name is REPLAY_CAPSULE_INVALID", () => {
    expect(() => recordedCommitments({ commitments: "salted-v2" })).toThrow(expect.objectContaining({ code: "PROTO_VERSION_MISMATCH", message: expect.stringContaining('"salted-v2"') }));
    for (const bad of [null, 1, "", "SALTED V1 <script>", { v: 1 }]) {
      expect(() => recordedCommitments({ commitments: bad }), JSON.stringify(bad)).toThrow(expect.objectContaining({ code: "REPLAY_CAPSULE_INVALID" }));
    }
  });
});
