/**
 * Writes conformance/vectors/federation/vectors.json (seed 003 §6): delegation chains, signed messages, scopes and
 * revocations from fixed keys at a fixed time, with the verdict a conforming node must reach.
 * Run: `deno run --allow-read --allow-write scripts/gen-federation-vectors.ts` (or with vite-node).
 * @module
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { buildFederationVectors } from "../conformance/lib/federation-build.ts";

const dir = new URL("../conformance/vectors/federation/", import.meta.url);
mkdirSync(dir, { recursive: true });
const v = buildFederationVectors();
writeFileSync(new URL("vectors.json", dir), JSON.stringify(v, null, 2) + "\n");
console.error(`wrote vectors.json: ${v.chains.length} chains, ${v.messages.length} message cases, ${v.scope.length} scope pairs, ${v.revocations.length} revocations`);
