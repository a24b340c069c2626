/**
 * Federation conformance (seed 003 §6, §10 "Federation Tests: delegation chains validate correctly"): the vectors of
 * `vectors/federation/vectors.json` — scope covering, delegation chains, signed messages, revocations — each reaching
 * its verdict, and the file being exactly what `federation-build.ts` builds (so it cannot rot). Runtime-neutral.
 * @module
 */
import { canonicalize } from "../../src/canonical/jcs.ts";
import { sha256Hex } from "../../src/canonical/sha256.ts";
import { validateChain } from "../../src/federation/chain.ts";
import { openMessage } from "../../src/federation/message.ts";
import { NonceBook } from "../../src/federation/nonces.ts";
import { isGenuine, parseRevocation } from "../../src/federation/revocation.ts";
import { entryCovers } from "../../src/federation/scope.ts";
import { ReachError } from "../../src/protocol/errors.ts";
import { buildFederationVectors } from "./federation-build.ts";
import type { FederationVectors } from "./federation-build.ts";
import type { ConformanceCase, ConformanceIO } from "./types.ts";
import { check } from "./types.ts";

/** Where the vectors live under `conformance/`. */
export const FEDERATION_VECTORS = "vectors/federation/vectors.json";

function verdict(fn: () => unknown): string {
  try {
    fn();
    return "ok";
  } catch (err) {
    if (err instanceof ReachError) return err.code;
    throw err;
  }
}

function registry(v: FederationVectors, ids: readonly string[]): (id: string) => string | undefined {
  const keys = new Map(Object.values(v.nodes).map((n) => [n.nodeId, n.publicKey]));
  return (id) => (ids.includes(id) ? keys.get(id) : undefined);
}

/**
 * The federation cases.
 * @param io file access rooted at `conformance/`
 * @returns the cases
 */
export function federationCases(io: ConformanceIO): ConformanceCase[] {
  const v = JSON.parse(io.readText(FEDERATION_VECTORS)) as FederationVectors;
  const now = Date.parse(v.now);
  const cases: ConformanceCase[] = [
    {
      name: "federation vectors: the committed file is what federation-build.ts builds",
      run: () => {
        const text = canonicalize(buildFederationVectors());
        check(text === canonicalize(v), `${FEDERATION_VECTORS} differs from buildFederationVectors(); regenerate it with scripts/gen-federation-vectors.ts`);
        return sha256Hex(text);
      },
    },
    {
      name: "federation scope: covering rules of tool:, resource:, permission:, host:",
      run: () => {
        for (const s of v.scope) check(entryCovers(s.parent, s.child) === s.covers, `${s.parent} ${s.covers ? "should" : "should not"} cover ${s.child}`);
        return String(v.scope.length);
      },
    },
  ];
  for (const c of v.chains) {
    cases.push({
      name: `federation chain: ${c.name} → ${c.expect}`,
      run: () => {
        let scope: readonly string[] = [];
        const got = verdict(() => {
          scope = validateChain(c.chain, { requester: c.requester, executor: c.executor, now, keyOf: registry(v, c.registered), isRevoked: (id, by) => c.revoked.some((r) => r.delegationId === id && r.delegator === by) }).scope;
        });
        check(got === (c.expect === "valid" ? "ok" : c.expect), `expected ${c.expect}, got ${got}`);
        if (c.scope !== undefined) check(canonicalize(scope) === canonicalize(c.scope), `scope ${JSON.stringify(scope)}, expected ${JSON.stringify(c.scope)}`);
        return got;
      },
    });
  }
  for (const m of v.messages) {
    cases.push({
      name: `federation message: ${m.name} → ${m.expect.join(", ")}`,
      run: () => {
        const nonces = new NonceBook(() => now);
        const got = m.messages.map((msg) => verdict(() => openMessage(msg, { self: m.self, now: Date.parse(m.now), keyOf: registry(v, m.registered), nonces })));
        check(got.join() === m.expect.join(), `expected ${m.expect.join(", ")}, got ${got.join(", ")}`);
        return got.join();
      },
    });
  }
  for (const r of v.revocations) {
    cases.push({
      name: `federation revocation: ${r.name} → ${r.genuine ? "genuine" : "ignored"}`,
      run: () => {
        const genuine = isGenuine(parseRevocation(r.revocation, r.name), registry(v, r.registered));
        check(genuine === r.genuine, `expected ${r.genuine ? "genuine" : "not genuine"}`);
        return String(genuine);
      },
    });
  }
  return cases;
}
