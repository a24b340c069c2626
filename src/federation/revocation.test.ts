// Revocations (seed 003 §6.3): only the delegator of a link, or the delegator of a link above it, can revoke it; a
// revocation by anyone else is refused when the node knows the delegation and ignored by a chain when it does not,
// and never stands in the way of the real one; revocations are kept by (revoker, delegation), at most
// `revocationLimit` per other node, and a message costs the same file operations however many are kept. Costs are
// counted in file operations, never in time.
import { describe, expect, it } from "vitest";
import { writeArchive } from "../capsule/archive.ts";
import { packFromDisk } from "../../tests/support/pack.ts";
import type { Delegation } from "../protocol/delegation.ts";
import { ReachError } from "../protocol/errors.ts";
import { exchange, postEnvelope } from "./client.ts";
import { requestDelegatedRun } from "./delegated-client.ts";
import { signDelegation } from "./delegation.ts";
import { signMessage } from "./message.ts";
import { signRevocation } from "./revocation.ts";
import type { Revocation } from "./revocation.ts";
import { pullRevocations, pushRevocations } from "./sync.ts";
import { RevocationStore } from "./revocation-store.ts";
import { memoryFiles, TestNetwork } from "../../tests/support/federation.ts";
import type { TestNode } from "../../tests/support/federation.ts";

const iso = (ms: number): string => new Date(ms).toISOString();
const uuidN = (i: number): string => `00000000-0000-4000-8000-${i.toString(16).padStart(12, "0")}`;
const HELLO = writeArchive([...packFromDisk("hello")].map(([path, bytes]) => ({ path, bytes })));

async function mesh(count: number, options: Parameters<TestNetwork["add"]>[1] = {}): Promise<{ n: TestNetwork; nodes: TestNode[] }> {
  const n = new TestNetwork();
  const nodes: TestNode[] = [];
  for (let i = 1; i <= count; i++) nodes.push(await n.add(i, i === 3 ? options : {}));
  await n.meshAll();
  return { n, nodes };
}

/** A grant from `from` to `to` (scope tool:stats: packs/hello declares tool:wordcount, so an unrevoked chain ends in POLICY_VIOLATION without running). */
function grant(n: TestNetwork, from: TestNode, to: TestNode, parent?: Delegation, scope = ["tool:stats"]): Delegation {
  const t = n.clock.now;
  return signDelegation({ delegator: from.id, delegate: to.id, scope, issuedAt: iso(t), expiresAt: iso(t + 3_600_000), ...(parent === undefined ? {} : { parent: parent.delegationId }) }, from.self.keys.privateKey);
}

/** What `at` answers `from`'s run request under `chain`: the refusal's code (POLICY_VIOLATION = the chain held). */
async function verdict(n: TestNetwork, from: TestNode, at: TestNode, chain: Delegation[]): Promise<{ code: string; details: Record<string, unknown> }> {
  const err = await requestDelegatedRun(n.client(from), at.self.identity, { archive: HELLO, input: { text: "a b" }, approve: false, restricted: true, chain }).then(() => undefined, (e: unknown) => e);
  expect(err).toBeInstanceOf(ReachError);
  return { code: (err as ReachError).code, details: (err as ReachError).details ?? {} };
}

/** A revocation signed by `by` for any delegation id (whether or not `by` is entitled). */
function revocationBy(by: TestNode, delegationId: string, t: number): Revocation {
  const fake = { delegationId, delegator: by.id } as Delegation;
  return signRevocation(fake, by.id, by.self.keys.privateKey, t);
}

const kept = (node: TestNode, prefix: string): string[] => [...node.files.store.keys()].filter((k) => k.startsWith(prefix));

describe("who may revoke (seed 003 §6.3)", () => {
  it("a peer's revocation of a delegation it did not grant does not revoke it, nor block the grantor's revocation", async () => {
    const { n, nodes: [a, b, c] } = await mesh(3);
    const d = grant(n, a!, c!);
    const t = n.clock.now;
    // c does not know d: b's "revocation" is kept under b, where no chain through d ever asks
    expect((await pushRevocations(n.client(b!), [c!.self.identity], [revocationBy(b!, d.delegationId, t)]))[0]).toMatchObject({ ok: true, count: 1 });
    expect((await verdict(n, a!, c!, [d])).code).toBe("POLICY_VIOLATION");
    // the grantor's revocation lands (count 1, not 0) and takes effect
    expect((await pushRevocations(n.client(a!), [c!.self.identity], [signRevocation(d, a!.id, a!.self.keys.privateKey, t)]))[0]).toMatchObject({ ok: true, count: 1 });
    expect(await verdict(n, a!, c!, [d])).toMatchObject({ code: "FED_DELEGATION_REVOKED", details: { revokedBy: a!.id } });
    expect(kept(c!, "revocations/").sort()).toEqual([`revocations/${a!.id}/${d.delegationId}.json`, `revocations/${b!.id}/${d.delegationId}.json`].sort());
  });

  it("a revocation by a node not entitled to revoke a delegation this node knows is refused (FED_TRUST_VIOLATION) and not kept", async () => {
    const { n, nodes: [a, b, c] } = await mesh(3);
    const ab = grant(n, a!, b!);
    const bc = grant(n, b!, c!, ab);
    for (const d of [ab, bc]) await b!.state.storeDelegation(d); // as `delegate --parent` keeps them
    const t = n.clock.now;
    for (const [who, id] of [[c!, bc.delegationId], [b!, ab.delegationId]] as const) {
      const [out] = await pushRevocations(n.client(who), [b!.self.identity], [revocationBy(who, id, t)]);
      expect(out).toMatchObject({ ok: false, count: 0, error: { code: "FED_TRUST_VIOLATION" } });
    }
    // a push with one bad revocation keeps nothing of it, not even the good one
    const mixed = await pushRevocations(n.client(a!), [b!.self.identity], [signRevocation(ab, a!.id, a!.self.keys.privateKey, t), revocationBy(c!, bc.delegationId, t)]);
    expect(mixed[0]!.error?.code).toBe("FED_TRUST_VIOLATION");
    expect(kept(b!, "revocations/")).toEqual([]);
    const status = await postEnvelope(n.fetch, b!.self.identity.endpoint, signMessage({ type: "revocation.push", from: c!.id, to: b!.id, body: { revocations: [revocationBy(c!, bc.delegationId, t)] } }, c!.self.keys.privateKey, t));
    expect(status.status).toBe(403);
    // the entitled ones land: b for its own grant, a for the link granted under its grant
    const ok = await pushRevocations(n.client(a!), [b!.self.identity], [signRevocation(bc, a!.id, a!.self.keys.privateKey, t, [ab]), signRevocation(ab, a!.id, a!.self.keys.privateKey, t)]);
    expect(ok[0]).toMatchObject({ ok: true, count: 2 });
  });

  it("the delegator of a link above can revoke a link below it; a chain honours it, and nobody else's", async () => {
    const { n, nodes: [a, b, c, d] } = await mesh(4);
    const ab = grant(n, a!, b!);
    const bc = grant(n, b!, c!, ab);
    const t = n.clock.now;
    expect(() => signRevocation(bc, c!.id, c!.self.keys.privateKey, t, [ab])).toThrow(expect.objectContaining({ code: "FED_TRUST_VIOLATION" }));
    // unknown at c: junk by d (a stranger to the chain) and by b of ab (b is ab's delegate, not its delegator) is kept, and ignored
    await pushRevocations(n.client(d!), [c!.self.identity], [revocationBy(d!, bc.delegationId, t), revocationBy(d!, ab.delegationId, t)]);
    await pushRevocations(n.client(b!), [c!.self.identity], [revocationBy(b!, ab.delegationId, t)]);
    expect((await verdict(n, a!, c!, [ab, bc])).code).toBe("POLICY_VIOLATION");
    expect((await pushRevocations(n.client(a!), [c!.self.identity], [signRevocation(bc, a!.id, a!.self.keys.privateKey, t, [ab])]))[0]).toMatchObject({ ok: true, count: 1 });
    expect(await verdict(n, a!, c!, [ab, bc])).toMatchObject({ code: "FED_DELEGATION_REVOKED", details: { link: 1, revokedBy: a!.id } });
  });
});

describe("how many a node keeps, and what a message costs", () => {
  it("beyond the limit one node's revocations are refused (POLICY_RATE_LIMIT_EXCEEDED, HTTP 429); other nodes' still land", async () => {
    const { n, nodes: [a, b, c, x] } = await mesh(4, { maxRevocationsPerNode: 3 });
    const t = n.clock.now;
    const junk = (from: number, count: number): Revocation[] => Array.from({ length: count }, (_, i) => revocationBy(b!, uuidN(from + i), t));
    expect((await pushRevocations(n.client(b!), [c!.self.identity], junk(0, 2)))[0]).toMatchObject({ ok: true, count: 2 });
    // two more would pass the limit: the whole push is refused, nothing of it kept
    expect((await pushRevocations(n.client(b!), [c!.self.identity], junk(2, 2)))[0]!.error?.code).toBe("POLICY_RATE_LIMIT_EXCEEDED");
    expect(kept(c!, `revocations/${b!.id}/`)).toHaveLength(2);
    expect((await pushRevocations(n.client(b!), [c!.self.identity], junk(2, 1)))[0]).toMatchObject({ ok: true, count: 1 });
    const over = await postEnvelope(n.fetch, c!.self.identity.endpoint, signMessage({ type: "revocation.push", from: b!.id, to: c!.id, body: { revocations: junk(3, 1) } }, b!.self.keys.privateKey, t));
    expect([over.status, (over.value as { body: { error: { code: string } } }).body.error.code]).toEqual([429, "POLICY_RATE_LIMIT_EXCEEDED"]);
    // a is unaffected, by push and by pull (x relays b's overflow and a's revocation: c keeps a's and refuses b's)
    const d = grant(n, a!, c!);
    const real = signRevocation(d, a!.id, a!.self.keys.privateKey, t);
    expect((await pushRevocations(n.client(a!), [c!.self.identity], [real]))[0]).toMatchObject({ ok: true, count: 1 });
    expect((await verdict(n, a!, c!, [d])).code).toBe("FED_DELEGATION_REVOKED");
    const d2 = grant(n, a!, c!);
    await pushRevocations(n.client(b!), [x!.self.identity], junk(10, 2));
    await pushRevocations(n.client(a!), [x!.self.identity], [signRevocation(d2, a!.id, a!.self.keys.privateKey, t)]);
    const pulled = (await pullRevocations(n.client(c!), c!.state)).find((o) => o.nodeId === x!.id);
    expect(pulled).toMatchObject({ ok: true, count: 1, refused: 2 });
    expect((await verdict(n, a!, c!, [d2])).code).toBe("FED_DELEGATION_REVOKED");
    expect(kept(c!, `revocations/${b!.id}/`)).toHaveLength(3);
  });

  it("a message costs the same file operations with 3 or 300 revocations kept, and a repeated pull reads no revocation again", async () => {
    const costs: Record<string, number>[] = [];
    for (const count of [3, 300]) {
      const { n, nodes: [a, b, c] } = await mesh(3);
      const t = n.clock.now;
      const junk = Array.from({ length: count }, (_, i) => revocationBy(b!, uuidN(i), t));
      expect((await pushRevocations(n.client(b!), [c!.self.identity], junk))[0]).toMatchObject({ ok: true, count });
      const node = await n.add(3, {}, c!.files.store); // c restarted over its directory
      const d = grant(n, a!, node);
      const ops = (): number => node.files.ops.read.length + node.files.ops.list.length + node.files.ops.write.length;
      const cost: Record<string, number> = {};
      const measure = async (what: string, send: () => Promise<unknown>): Promise<void> => {
        const before = ops();
        await send();
        cost[what] = ops() - before;
      };
      await measure("first empty push", () => exchange(n.client(a!), node.self.identity, "revocation.push", { revocations: [] }, "revocation.ack"));
      await measure("empty push", () => exchange(n.client(a!), node.self.identity, "revocation.push", { revocations: [] }, "revocation.ack"));
      await measure("push", () => pushRevocations(n.client(a!), [node.self.identity], [revocationBy(a!, uuidN(99_999), t)]));
      await measure("run request", () => verdict(n, a!, node, [d]));
      await measure("revoked run request", async () => {
        await pushRevocations(n.client(a!), [node.self.identity], [signRevocation(d, a!.id, a!.self.keys.privateKey, t)]);
        expect((await verdict(n, a!, node, [d])).code).toBe("FED_DELEGATION_REVOKED");
      });
      costs.push(cost);
      // a pull reply lists what it sends, and reads each kept revocation at most once per process
      const first = (await exchange(n.client(a!), node.self.identity, "revocation.pull", {}, "revocation.list")).body["revocations"] as unknown[];
      expect(first).toHaveLength(count + 2);
      const reads = node.files.ops.read.length;
      await exchange(n.client(a!), node.self.identity, "revocation.pull", {}, "revocation.list");
      expect(node.files.ops.read.slice(reads).filter((p) => p.startsWith("revocations/"))).toEqual([]);
    }
    expect(costs[1]).toEqual(costs[0]);
  }, 60_000);
});

describe("what a pull relays", () => {
  it("its own revocations first, then at most N of each other signer's per reply, in a window that moves so all are relayed in turn", async () => {
    const { n, nodes: [a, b, c] } = await mesh(3);
    const t = n.clock.now;
    const store = new RevocationStore(memoryFiles());
    for (let i = 0; i < 5; i++) await store.add(revocationBy(b!, uuidN(i), t), null);
    await store.add(revocationBy(a!, uuidN(100), t), null);
    await store.add(revocationBy(c!, uuidN(200), t), null);
    const replies: string[][] = [];
    for (let k = 0; k < 3; k++) replies.push((await store.list(c!.id, 100, 2)).map((r) => `${r.delegator === b!.id ? "b" : r.delegator === a!.id ? "a" : "c"}${Number.parseInt(r.delegationId.slice(-4), 16)}`));
    for (const reply of replies) {
      expect(reply[0]).toBe("c200");
      expect(reply.filter((x) => x.startsWith("b"))).toHaveLength(2);
      expect(reply).toContain("a100");
    }
    expect(new Set(replies.flat().filter((x) => x.startsWith("b")))).toEqual(new Set(["b0", "b1", "b2", "b3", "b4"]));
    expect((await store.list(c!.id, 3, 2)).length).toBe(3);
  });
});

describe("an upgraded node", () => {
  it("reads the revocation files of earlier versions (revocations/<delegationId>.json) and moves them under their signer", async () => {
    const { n, nodes: [a, b, c] } = await mesh(3);
    const t = n.clock.now;
    const d = grant(n, a!, c!);
    const d2 = grant(n, a!, c!);
    const enc = (r: Revocation): Uint8Array => new TextEncoder().encode(JSON.stringify(r, null, 2) + "\n");
    // as an earlier version left them: a's revocation of d, and b's junk "revocation" of d2 that used to block a's
    c!.files.store.set(`revocations/${d.delegationId}.json`, enc(signRevocation(d, a!.id, a!.self.keys.privateKey, t)));
    c!.files.store.set(`revocations/${d2.delegationId}.json`, enc(revocationBy(b!, d2.delegationId, t)));
    c!.files.store.set("revocations/00000000-0000-4000-8000-00000000dead.json", new TextEncoder().encode("{half"));
    const upgraded = await n.add(3, {}, c!.files.store);
    expect(await verdict(n, a!, upgraded, [d])).toMatchObject({ code: "FED_DELEGATION_REVOKED", details: { revokedBy: a!.id } });
    expect((await verdict(n, a!, upgraded, [d2])).code).toBe("POLICY_VIOLATION");
    expect((await pushRevocations(n.client(a!), [upgraded.self.identity], [signRevocation(d2, a!.id, a!.self.keys.privateKey, t)]))[0]).toMatchObject({ ok: true, count: 1 });
    expect((await verdict(n, a!, upgraded, [d2])).code).toBe("FED_DELEGATION_REVOKED");
    expect(kept(upgraded, "revocations/").sort()).toEqual([
      "revocations/00000000-0000-4000-8000-00000000dead.json",
      `revocations/${a!.id}/${d.delegationId}.json`,
      `revocations/${a!.id}/${d2.delegationId}.json`,
      `revocations/${b!.id}/${d2.delegationId}.json`,
    ].sort());
    expect((await upgraded.state.revocations()).map((r) => `${r.delegator}/${r.delegationId}`).sort()).toEqual([`${a!.id}/${d.delegationId}`, `${a!.id}/${d2.delegationId}`, `${b!.id}/${d2.delegationId}`].sort());
  });
});
