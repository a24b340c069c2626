/**
 * Ledger throughput: events appended, ordered, canonicalised, hashed and chained per second, with 1 KiB payloads
 * (the canonical JSON of each payload is 1024 bytes). Baseline measured in the same run: SHA-256 alone over the same
 * 1 KiB canonical bytes plus the 150-byte event preimage (the floor any chained log pays).
 * @module
 */
import { canonicalize } from "../../src/canonical/jcs.ts";
import { sha256Hex } from "../../src/canonical/sha256.ts";
import { VirtualClock } from "../../src/determinism/clock.ts";
import { EventLog } from "../../src/ledger/mod.ts";
import { n } from "./smoke.ts";

/** A deterministic payload whose canonical JSON is exactly 1024 bytes. */
export function kibPayload(i: number): Record<string, unknown> {
  const base = { invocationId: `inv-${i}`, result: { index: i, text: "" }, outputHash: "a".repeat(64) };
  const pad = 1024 - canonicalize(base).length;
  base.result.text = "x".repeat(pad);
  return base;
}

/**
 * Measure append+chain throughput.
 * @param log line printer
 * @param events number of events per measured run
 * @returns events per second (best of the runs) and the hash-only baseline
 */
export function benchLedger(log: (line: string) => void, events = n(200_000, 2_000)): { eventsPerSec: number; hashOnlyPerSec: number } {
  const payloads = Array.from({ length: 1024 }, (_, i) => kibPayload(i));
  if (canonicalize(payloads[7]).length !== 1024) throw new Error("payload is not 1 KiB");
  let best = 0;
  for (let round = 0; round < n(3); round++) {
    const runId = "00000000-0000-8000-8000-000000000000";
    const ledger = new EventLog({ runId, clock: new VirtualClock() });
    ledger.append("run.started", { runId, packId: "bench", specVersion: "1.0.0" });
    ledger.append("run.step.started", { stepId: "s", stepType: "tool", stepIndex: 0, toolName: "t" });
    const t0 = performance.now();
    for (let i = 0; i < events; i += 2) {
      const p = payloads[i & 1023]!;
      ledger.append("tool.invoked", { toolName: "t", invocationId: `inv-${i}`, arguments: p.result as Record<string, unknown>, timeoutMs: 1, stepId: "s" });
      ledger.append("tool.completed", { ...p, invocationId: `inv-${i}` });
    }
    ledger.runHash();
    const secs = (performance.now() - t0) / 1000;
    best = Math.max(best, events / secs);
  }
  let hashBest = 0;
  const texts = payloads.map((p) => canonicalize(p));
  for (let round = 0; round < 3; round++) {
    const t0 = performance.now();
    let prev = "0".repeat(64);
    for (let i = 0; i < events; i++) {
      const ph = sha256Hex(texts[i & 1023]!);
      prev = sha256Hex("tool.completed" + "2026-01-01T00:00:00.000Z" + ph + prev);
    }
    hashBest = Math.max(hashBest, events / ((performance.now() - t0) / 1000));
  }
  log(`ledger: ${Math.round(best).toLocaleString("en-US")} events/s appended+chained (1 KiB payloads); ` +
    `hash-only floor ${Math.round(hashBest).toLocaleString("en-US")} events/s; ratio ${(best / hashBest).toFixed(2)}`);
  return { eventsPerSec: best, hashOnlyPerSec: hashBest };
}
