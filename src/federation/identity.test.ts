import { describe, expect, it } from "vitest";
import { ReachError } from "../protocol/errors.ts";
import { expiryFrom, parseDelegation, signDelegation } from "./delegation.ts";
import { createNode, isLoopbackHost, normalizeEndpoint, randomUuidV4 } from "./identity.ts";
import { NonceBook } from "./nonces.ts";
import { assertScope, packExcess, scopeExcess } from "./scope.ts";
import { NodeState } from "./state.ts";
import { memoryFiles } from "../../tests/support/federation.ts";

const code = (fn: () => unknown): string => {
  try {
    fn();
    return "ok";
  } catch (err) {
    return err instanceof ReachError ? err.code : String(err);
  }
};

describe("node identity (seed 003 §6.1)", () => {
  it("a node id is a random UUID v4 and the identity validates; http only on loopback", () => {
    const ids = new Set(Array.from({ length: 50 }, () => randomUuidV4()));
    expect(ids.size).toBe(50);
    for (const id of ids) expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(createNode("https://node-a.example:8443/").identity.endpoint).toBe("https://node-a.example:8443");
    expect(normalizeEndpoint("http://127.0.0.1:9000")).toBe("http://127.0.0.1:9000");
    expect(code(() => normalizeEndpoint("http://node-a.example"))).toBe("PROTO_INVALID_ARGUMENT");
    expect(code(() => normalizeEndpoint("https://u:p@node-a.example"))).toBe("PROTO_INVALID_ARGUMENT");
    expect([isLoopbackHost("127.9.0.1"), isLoopbackHost("[::1]"), isLoopbackHost("localhost"), isLoopbackHost("10.0.0.1")]).toEqual([true, true, true, false]);
  });

  it("persists: init writes node.json and a 0600 key, refuses to init twice, and reads back the same node", async () => {
    const files = memoryFiles();
    const modes = new Map<string, number | undefined>();
    const write = files.write;
    files.write = async (p, b, mode) => {
      modes.set(p, mode);
      await write(p, b, mode);
    };
    const state = new NodeState(files);
    const self = createNode("https://127.0.0.1:8443");
    await state.init(self);
    expect(modes.get("node.key")).toBe(0o600);
    expect((await state.self()).identity).toEqual(self.identity);
    await expect(state.init(createNode("https://127.0.0.1:8443"))).rejects.toMatchObject({ code: "PROTO_INVALID_ARGUMENT" });
    files.store.set("node.json", new TextEncoder().encode(JSON.stringify(createNode("https://127.0.0.1:8443").identity)));
    await expect(state.self()).rejects.toMatchObject({ code: "PROTO_INVALID_ARGUMENT" }); // key of another node
  });
});

describe("scopes and delegations (seed 003 §6.2)", () => {
  it("checks scope entries, subsets, and pack declarations", () => {
    expect(code(() => assertScope(["tool:a", "resource:memory://notes/", "permission:network", "host:*.example.com"], "s"))).toBe("ok");
    for (const bad of ["a", "tool:", "tool:a b", "permission:root", "resource:/etc", "host:ex ample.com", "cap:x"]) expect(code(() => assertScope([bad], "s")), bad).toBe("FED_DELEGATION_INVALID");
    expect(scopeExcess(["tool:a", "resource:workspace:///d/x/"], ["tool:a", "resource:workspace:///d/"])).toEqual([]);
    const pack = { manifest: { capabilities: { tools: [{ name: "t" }], resources: [{ uri: "workspace:///out/", access: "write" }], permissions: ["network"] }, policies: { allowedHosts: ["api.example.com"] } } } as never;
    expect(packExcess(pack, ["tool:t", "resource:workspace:///", "permission:network", "host:*.example.com"])).toEqual([]);
    expect(packExcess(pack, ["tool:t"])).toEqual(["resource:workspace:///out/", "permission:network", "host:api.example.com"]);
  });

  it("expiry from a duration or an instant, never in the past; a delegation round-trips its schema", () => {
    const now = Date.UTC(2026, 0, 1);
    expect(expiryFrom("90s", now)).toBe("2026-01-01T00:01:30.000Z");
    expect(expiryFrom("2d", now)).toBe("2026-01-03T00:00:00.000Z");
    expect(expiryFrom("2026-12-31T23:59:59Z", now)).toBe("2026-12-31T23:59:59.000Z");
    for (const bad of ["0s", "1y", "2025-01-01T00:00:00Z", "tomorrow", "99999999d"]) expect(code(() => expiryFrom(bad, now)), bad).toBe("PROTO_INVALID_ARGUMENT");
    const key = new Uint8Array(32).fill(5);
    const d = signDelegation({ delegator: randomUuidV4(), delegate: randomUuidV4(), scope: ["tool:a"], issuedAt: new Date(now).toISOString(), expiresAt: expiryFrom("1h", now) }, key);
    expect(parseDelegation(JSON.parse(JSON.stringify(d)), "d")).toEqual(d);
    expect(code(() => signDelegation({ ...d, scope: ["tool:a", "tool:a"] }, key))).toBe("FED_DELEGATION_INVALID");
  });
});

describe("nonce book", () => {
  it("refuses a nonce twice and forgets it once no message carrying it can pass the window", () => {
    let now = 1_000_000;
    const book = new NonceBook(() => now);
    expect(book.record("a", "n1", now)).toBe(true);
    expect(book.record("a", "n1", now)).toBe(false);
    expect(book.record("b", "n1", now)).toBe(true);
    const saved = new NonceBook(() => now, book.toJSON());
    expect(saved.record("a", "n1", now)).toBe(false);
    now += 120_001;
    expect(book.toJSON().seen).toEqual([]);
  });
});
