/**
 * `npm run bench` (redaction part; `npx vite-node scripts/bench-redact.ts`): what `verify` costs on a redacted capsule
 * against the capsule it was redacted from — the committed `notes-salted` run and `notes-redacted` (a step's values and a
 * workspace file removed, conformance/HASHING.md "Redaction") — in process on Node, interleaved (original, redacted,
 * original, …) so that load on the machine falls on both alike; medians and their ratio. Also the cost of `redact`
 * itself. Nothing here is asserted by tests; `REACH_BENCH_SMOKE=1` runs it with tiny counts.
 * @module
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { setSha256Backend } from "../src/canonical/sha256.ts";
import { readRunCapsule } from "../src/capsule/run-capsule.ts";
import { redactCapsule } from "../src/engine/redact.ts";
import { verifyRunCapsule } from "../src/engine/verify.ts";
import { nativeSha256Backend } from "../src/platform/native-sha256.ts";
import { n } from "./bench/smoke.ts";

const root = new URL("../", import.meta.url).pathname;
const capsuleIn = (folder: string): Uint8Array => {
  const dir = join(root, "conformance/capsules", folder);
  return new Uint8Array(readFileSync(join(dir, readdirSync(dir).find((f) => f.endsWith(".capsule.tar.gz"))!)));
};
setSha256Backend(nativeSha256Backend); // as the CLI on Node

const original = capsuleIn("notes-salted");
const redacted = capsuleIn("notes-redacted");
const ROUNDS = n(41, 2);

function verifyMs(bytes: Uint8Array): number {
  const t = performance.now();
  const v = verifyRunCapsule(readRunCapsule(bytes));
  const ms = performance.now() - t;
  if (!v.valid) throw new Error(`the capsule does not verify: ${JSON.stringify(v.checks.filter((c) => !c.ok))}`);
  return ms;
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
for (let i = 0; i < n(5, 1); i++) verifyMs(i % 2 === 0 ? original : redacted); // warm-up
const a: number[] = [];
const b: number[] = [];
for (let i = 0; i < ROUNDS; i++) {
  a.push(verifyMs(original));
  b.push(verifyMs(redacted));
}
const redactMs: number[] = [];
for (let i = 0; i < n(11, 1); i++) {
  const t = performance.now();
  redactCapsule(readRunCapsule(original), { steps: ["save"], entries: ["workspace/after/out/index.json"] });
  redactMs.push(performance.now() - t);
}
console.log(`[redact] verify (read + check) of notes, median of ${ROUNDS} interleaved: original ${median(a).toFixed(2)} ms (${original.length} bytes), redacted ${median(b).toFixed(2)} ms (${redacted.length} bytes); ratio redacted/original ${(median(b) / median(a)).toFixed(2)}; redact itself ${median(redactMs).toFixed(2)} ms`);
