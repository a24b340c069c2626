// The quick checks stand in for zod on the run path (the engine's envelopes, the pack listing's paths): whenever one
// says yes, the schema must say yes and give back the same value; when it says no, the schema decides.
import { describe, expect, it } from "vitest";
import { entryPath, isEntryPath } from "./_common.ts";
import { ExecutionEnvelopeSchema, isExactEnvelope } from "./envelope.ts";

const good = () => ({ id: "e-1", task_id: "count", tool: "wordcount", arguments: { text: "a b" }, context: { session_id: "r", permissions: ["network"] }, timeout_ms: 1000 });

function variants(): unknown[] {
  const out: unknown[] = [good()];
  const bad: Array<(e: Record<string, unknown>) => void> = [
    (e) => (e["id"] = ""),
    (e) => (e["id"] = "x".repeat(257)),
    (e) => (e["task_id"] = 7),
    (e) => (e["tool"] = "-bad"),
    (e) => (e["tool"] = "t".repeat(129)),
    (e) => (e["arguments"] = []),
    (e) => (e["arguments"] = null),
    (e) => (e["arguments"] = new Date(0)),
    (e) => (e["arguments"] = JSON.parse('{"__proto__": {"x": 1}, "a": 1}')),
    (e) => (e["arguments"] = { [Symbol("s")]: 1, a: 1 }),
    (e) => (e["arguments"] = Object.create(null)),
    (e) => (e["context"] = { session_id: "r", permissions: [1] }),
    (e) => {
      const holes: unknown[] = [];
      holes[1] = "x";
      e["context"] = { session_id: "r", permissions: holes };
    },
    (e) => (e["context"] = { permissions: [], session_id: "r" }),
    (e) => (e["context"] = { session_id: "r", permissions: [], extra: 1 }),
    (e) => (e["timeout_ms"] = 0),
    (e) => (e["timeout_ms"] = 1.5),
    (e) => (e["timeout_ms"] = 2 ** 53),
    (e) => (e["timeout_ms"] = "5"),
    (e) => (e["extra"] = 1),
    (e) => delete e["tool"],
  ];
  for (const f of bad) {
    const e: Record<string, unknown> = good();
    f(e);
    out.push(e);
  }
  const { task_id, ...rest } = good();
  out.push({ task_id, ...rest });
  return out;
}

describe("isExactEnvelope", () => {
  it("says yes only where the schema accepts the envelope and returns it unchanged (values and key order)", () => {
    let yes = 0;
    for (const v of variants()) {
      const parsed = ExecutionEnvelopeSchema().safeParse(v, { jitless: true });
      if (isExactEnvelope(v)) {
        yes++;
        expect(parsed.success).toBe(true);
        expect(JSON.stringify(parsed.data)).toBe(JSON.stringify(v));
      }
    }
    expect(yes).toBeGreaterThanOrEqual(2); // the good one, and arguments without a prototype
    expect(isExactEnvelope(good())).toBe(true);
  });
});

describe("isEntryPath", () => {
  it("agrees with the entryPath schema", () => {
    const paths = ["a", "a/b.json", "tools/x.wasm", "", "/a", "a/", "./a", "a/./b", "a/../b", "..", ".", "a\\b", "a//b", "é", "a b", "x".repeat(1024), "x".repeat(1025), ".reach/signature", "a/.b", "...", "a\u0000b"];
    for (const p of paths) expect([p, isEntryPath(p)]).toEqual([p, entryPath().safeParse(p).success]);
  });
});
