/**
 * Writes the worked hash-chain vectors under conformance/vectors/hash-chain/: one successful and one failed run,
 * each as `<name>.events.jsonl` (what a run records) and `<name>.expected.json` (every intermediate value a third
 * party needs: canonical payloads, payloadHash, the eventHash preimage, eventHash, runHash).
 * Run: `deno run --allow-read --allow-write scripts/gen-chain-vectors.ts` (or `npm run vectors`).
 * The values are cross-checked by an independent implementation in conformance/node/chain-independent.test.ts.
 * @module
 */
import { writeFileSync } from "node:fs";
import { buildChainVectors } from "../conformance/lib/chain-build.ts";

const outDir = new URL("../conformance/vectors/hash-chain/", import.meta.url);
for (const v of buildChainVectors()) {
  writeFileSync(new URL(`${v.name}.events.jsonl`, outDir), v.jsonl);
  writeFileSync(new URL(`${v.name}.expected.json`, outDir), JSON.stringify(v.expected, null, 2) + "\n");
  console.error(`wrote ${v.name}: ${v.expected.events.length} events, runHash ${v.expected.runHash}`);
}
