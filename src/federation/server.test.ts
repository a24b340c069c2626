import { describe, expect, it } from "vitest";
import { readQuickJsEngineWasm, readPythonWasm } from "../../tests/support/platform.ts";
import { ReachError } from "../protocol/errors.ts";
import { exchange, postEnvelope } from "./client.ts";
import { signDelegation } from "./delegation.ts";
import { MESSAGES_PATH, NODE_PATH, openMessage, signMessage } from "./message.ts";
import { NonceBook } from "./nonces.ts";
import { signRevocation } from "./revocation.ts";
import { createNodeApp } from "./server.ts";
import { pullRevocations, pushRevocations, startRevocationSync } from "./sync.ts";
import { TestNetwork } from "../../tests/support/federation.ts";

const iso = (ms: number): string => new Date(ms).toISOString();

async function two(): Promise<{ n: TestNetwork; a: Awaited<ReturnType<TestNetwork["add"]>>; b: Awaited<ReturnType<TestNetwork["add"]>> }> {
  const n = new TestNetwork();
  const a = await n.add(1);
  const b = await n.add(2);
  await n.meshAll();
  return { n, a, b };
}

describe("the node's HTTP face (seed 003 §6.1: every message signed)", () => {
  it("answers a signed request with a signed reply bound to the request's nonce", async () => {
    const { n, a, b } = await two();
    const reply = await exchange(n.client(a), b.self.identity, "revocation.pull", {}, "revocation.list");
    expect(reply.from).toBe(b.id);
    expect(reply.to).toBe(a.id);
    expect(reply.body).toEqual({ revocations: [] });
    const node = await b.app.fetch(new Request(`${b.self.identity.endpoint}${NODE_PATH}`));
    expect(await node.json()).toEqual(b.self.identity);
  });

  it("refuses each bad message with its own code and HTTP status, in a signed error reply", async () => {
    const { n, a, b } = await two();
    const d = await n.add(4); // not registered at b
    const now = n.clock.now;
    const ok = (nonce: string, at = now) => signMessage({ type: "revocation.pull", from: a.id, to: b.id, body: {} }, a.self.keys.privateKey, at, nonce);
    const { signature: _s, ...unsigned } = ok("1".repeat(32));
    const cases: [string, unknown, string, number][] = [
      ["unsigned", unsigned, "FED_SIGNATURE_MISSING", 401],
      ["badly signed", { ...ok("2".repeat(32)), body: { x: 1 } }, "FED_SIGNATURE_INVALID", 401],
      ["unregistered", signMessage({ type: "revocation.pull", from: d.id, to: b.id, body: {} }, d.self.keys.privateKey, now), "FED_NODE_UNAUTHORIZED", 401],
      ["too old", ok("3".repeat(32), now - 121_000), "FED_MESSAGE_STALE", 409],
      ["too new", ok("4".repeat(32), now + 121_000), "FED_MESSAGE_STALE", 409],
      ["not JSON", "{", "PROTO_INVALID_MESSAGE", 400],
    ];
    for (const [what, msg, code, status] of cases) {
      const res = await b.app.fetch(new Request(`${b.self.identity.endpoint}${MESSAGES_PATH}`, { method: "POST", body: typeof msg === "string" ? msg : JSON.stringify(msg) }));
      expect(res.status, what).toBe(status);
      const reply = openMessage(await res.json(), { self: (msg as { from?: string }).from ?? "00000000-0000-0000-0000-000000000000", now, keyOf: () => b.self.identity.publicKey });
      expect(reply.type, what).toBe("error");
      expect((reply.body["error"] as { code: string }).code, what).toBe(code);
      expect(reply.body["specVersion"]).toBe("1.0.0");
    }
  });

  it("answers an unknown path (404) and a method a path does not take (405, with Allow) with a signed error reply", async () => {
    const { n, b } = await two();
    const cases: [string, string, number, string | null][] = [
      ["GET", MESSAGES_PATH, 405, "POST"],
      ["DELETE", NODE_PATH, 405, "GET"],
      ["GET", "/federation/v1/nope", 404, null],
      ["POST", "/", 404, null],
    ];
    for (const [method, path, status, allow] of cases) {
      const res = await b.app.fetch(new Request(`${b.self.identity.endpoint}${path}`, { method }));
      expect(res.status, `${method} ${path}`).toBe(status);
      expect(res.headers.get("allow"), `${method} ${path}`).toBe(allow);
      const reply = openMessage(await res.json(), { self: "00000000-0000-0000-0000-000000000000", now: n.clock.now, keyOf: () => b.self.identity.publicKey });
      expect(reply.type).toBe("error");
      expect((reply.body["error"] as { code: string; message: string }).code).toBe("PROTO_INVALID_ARGUMENT");
      expect((reply.body["error"] as { message: string }).message).toContain(path);
    }
  });

  it("accepts a message once: a replay is refused, also after the node restarts with its saved nonces", async () => {
    const { n, a, b } = await two();
    const msg = signMessage({ type: "revocation.pull", from: a.id, to: b.id, body: {} }, a.self.keys.privateKey, n.clock.now);
    expect((await postEnvelope(n.fetch, b.self.identity.endpoint, msg)).status).toBe(200);
    const again = await postEnvelope(n.fetch, b.self.identity.endpoint, msg);
    expect(again.status).toBe(409);
    expect(((again.value as { body: { error: { code: string } } }).body.error.code)).toBe("FED_MESSAGE_REPLAYED");
    const now = (): number => n.clock.now;
    const restarted = createNodeApp({ state: b.state, self: b.self, now, nonces: new NonceBook(now, await b.state.nonces()), host: { env: { quickjsEngine: readQuickJsEngineWasm, pythonEngine: readPythonWasm } } });
    const res = await restarted.fetch(new Request(`${b.self.identity.endpoint}${MESSAGES_PATH}`, { method: "POST", body: JSON.stringify(msg) }));
    expect(res.status).toBe(409);
  });

  it("a reply that is not signed by the expected peer is refused", async () => {
    const { n, a, b } = await two();
    const impostor = await n.add(3);
    // the impostor answers at b's endpoint with its own key
    n.nodes.set(b.self.identity.endpoint, impostor);
    await impostor.state.savePeers([a.self.identity]);
    const err = await exchange(n.client(a), b.self.identity, "revocation.pull", {}, "revocation.list").catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ReachError);
    expect(["FED_SIGNATURE_INVALID", "FED_NODE_UNAUTHORIZED"]).toContain((err as ReachError).code);
  });
});

describe("revocations (seed 003 §6.3)", () => {
  it("push: a genuine revocation is recorded by the peer; one signed by another node is ignored", async () => {
    const { n, a, b } = await two();
    const t = n.clock.now;
    const d = signDelegation({ delegator: a.id, delegate: b.id, scope: ["tool:x"], issuedAt: iso(t), expiresAt: iso(t + 60_000) }, a.self.keys.privateKey);
    const forged = { ...signRevocation({ ...d, delegator: b.id }, b.id, b.self.keys.privateKey, t), delegator: a.id };
    const [outcome] = await pushRevocations(n.client(a), [b.self.identity], [signRevocation(d, a.id, a.self.keys.privateKey, t), forged]);
    expect(outcome).toMatchObject({ ok: true, count: 1 });
    expect((await b.state.revocations()).map((r) => r.delegationId)).toEqual([d.delegationId]);
  });

  it("pull: a node that missed the push learns the revocation from any peer that has it", async () => {
    const { n, a, b } = await two();
    const c = await n.add(3);
    await n.meshAll();
    const t = n.clock.now;
    const d = signDelegation({ delegator: a.id, delegate: c.id, scope: ["tool:x"], issuedAt: iso(t), expiresAt: iso(t + 60_000) }, a.self.keys.privateKey);
    const r = signRevocation(d, a.id, a.self.keys.privateKey, t);
    n.blocked.add(new URL(c.self.identity.endpoint).origin);
    const pushed = await pushRevocations(n.client(a), [b.self.identity, c.self.identity], [r]);
    expect(pushed.map((p) => p.ok)).toEqual([true, false]);
    expect(pushed[1]!.error?.code).toBe("FED_NODE_UNREACHABLE");
    n.blocked.clear();
    n.blocked.add(new URL(a.self.identity.endpoint).origin); // a is down too: c pulls from b
    const outcomes = await pullRevocations(n.client(c), c.state);
    expect(outcomes.find((o) => o.nodeId === b.id)).toMatchObject({ ok: true, count: 1 });
    expect((await c.state.revocations()).map((x) => x.delegationId)).toEqual([d.delegationId]);
  });

  it("the pull loop runs rounds until stopped, and refuses intervals over 30 s", async () => {
    let rounds = 0;
    const sync = startRevocationSync(5, async () => void rounds++);
    const deadline = performance.now() + 20_000;
    while (rounds < 3 && performance.now() < deadline) await new Promise((r) => setTimeout(r, 5));
    await sync.stop();
    const after = rounds;
    await new Promise((r) => setTimeout(r, 30));
    expect(after).toBeGreaterThanOrEqual(3);
    expect(rounds).toBe(after);
    expect(() => startRevocationSync(30_001, async () => {})).toThrow(RangeError);
  });
});
