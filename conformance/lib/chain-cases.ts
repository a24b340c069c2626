/**
 * Hash-chain conformance: the worked vectors of conformance/vectors/hash-chain/ recomputed from their parts, the
 * ledger rebuilding them byte for byte, and tamper detection (every single-byte change of a recorded event outside
 * its unhashed `metrics` is reported at that event's index).
 * @module
 */
import { canonicalize } from "../../src/canonical/jcs.ts";
import { sha256Hex, utf8 } from "../../src/canonical/sha256.ts";
import { eventHash, GENESIS_HASH, payloadHash, readJsonl, runHash, verifyJsonl } from "../../src/ledger/mod.ts";
import { buildChainVectors } from "./chain-build.ts";
import type { ExpectedEvent } from "./chain-build.ts";
import type { ConformanceCase, ConformanceIO } from "./types.ts";
import { check } from "./types.ts";

const NAMES = ["success", "failure"] as const;

/** Byte ranges [start, end) of every `metrics` value in a JSONL text (the unhashed part). */
export function metricsRanges(bytes: Uint8Array): Array<[number, number]> {
  const text = new TextDecoder().decode(bytes);
  const ranges: Array<[number, number]> = [];
  const marker = ',"metrics":';
  let from = 0;
  for (;;) {
    const at = text.indexOf(marker, from);
    if (at === -1) break;
    let depth = 0;
    let end = at + marker.length;
    for (; end < text.length; end++) {
      const ch = text[end];
      if (ch === "{") depth++;
      else if (ch === "}" && --depth === 0) break;
    }
    // Only the metrics value is skipped (its key is checked like any other); offsets are converted to bytes.
    const startB = utf8(text.slice(0, at + marker.length)).length;
    const endB = startB + utf8(text.slice(at + marker.length, end + 1)).length;
    ranges.push([startB, endB]);
    from = end + 1;
  }
  return ranges;
}

/**
 * The hash-chain cases.
 * @param io file access rooted at conformance/
 * @returns named cases; each returns the runHash it verified as its fingerprint
 */
export function chainCases(io: ConformanceIO): ConformanceCase[] {
  const cases: ConformanceCase[] = [];
  for (const name of NAMES) {
    const jsonl = () => io.readBytes(`vectors/hash-chain/${name}.events.jsonl`);
    const expected = () =>
      JSON.parse(io.readText(`vectors/hash-chain/${name}.expected.json`)) as {
        events: ExpectedEvent[];
        runHashPreimage: string;
        runHash: string;
      };
    cases.push({
      name: `hash-chain/${name}: every payloadHash, eventHash and the runHash recompute from their parts`,
      run() {
        const exp = expected();
        const { events, error } = readJsonl(jsonl());
        check(!error, `events.jsonl unreadable: ${JSON.stringify(error)}`);
        check(events.length === exp.events.length, "event count differs from the expected file");
        let prev = GENESIS_HASH;
        events.forEach((raw, i) => {
          const e = raw as Record<string, unknown>;
          const x = exp.events[i]!;
          check(canonicalize(e.payload) === x.canonicalPayload, `event ${i}: canonical payload differs`);
          check(sha256Hex(x.canonicalPayload) === x.payloadHash, `event ${i}: payloadHash ≠ SHA-256(canonical payload)`);
          check(payloadHash(e.payload) === x.payloadHash && e.payloadHash === x.payloadHash, `event ${i}: payloadHash differs`);
          check(x.prevEventHash === prev && e.prevEventHash === prev, `event ${i}: prevEventHash differs`);
          check(x.eventHashPreimage === x.type + x.timestamp + x.payloadHash + prev, `event ${i}: preimage differs`);
          check(sha256Hex(x.eventHashPreimage) === x.eventHash, `event ${i}: eventHash ≠ SHA-256(preimage)`);
          check(eventHash(x.type, x.timestamp, x.payloadHash, prev) === x.eventHash && e.eventHash === x.eventHash, `event ${i}: eventHash differs`);
          prev = x.eventHash;
        });
        check(exp.runHashPreimage === exp.events.map((x) => x.eventHash).join(""), "runHash preimage differs");
        check(sha256Hex(exp.runHashPreimage) === exp.runHash, "runHash ≠ SHA-256(preimage)");
        check(runHash(exp.events.map((x) => x.eventHash)) === exp.runHash, "runHash() differs");
        const report = verifyJsonl(jsonl(), exp.runHash);
        check(report.valid, `verifyJsonl: ${JSON.stringify(report)}`);
        return exp.runHash;
      },
    });
    cases.push({
      name: `hash-chain/${name}: the ledger rebuilds the recorded events.jsonl byte for byte`,
      run() {
        const built = buildChainVectors().find((v) => v.name === name)!;
        const recorded = io.readText(`vectors/hash-chain/${name}.events.jsonl`);
        check(built.jsonl === recorded, "the EventLog no longer produces the recorded bytes: run `npm run vectors` only if the change is deliberate");
        return sha256Hex(recorded);
      },
    });
    cases.push({
      name: `hash-chain/${name}: any single changed byte outside metrics is reported at its event's index`,
      run() {
        const bytes = jsonl();
        const skip = metricsRanges(bytes);
        const lineOf: number[] = [];
        let line = 0;
        for (const b of bytes) {
          lineOf.push(line);
          if (b === 0x0a) line++;
        }
        let flips = 0;
        for (let pos = 0; pos < bytes.length; pos++) {
          if (skip.some(([s, e]) => pos >= s && pos < e)) continue;
          for (const mask of [0x01, 0x20]) {
            const copy = bytes.slice();
            copy[pos] = copy[pos]! ^ mask;
            const report = verifyJsonl(copy);
            check(!report.valid, `byte ${pos} ^ ${mask} went unnoticed`);
            check(report.index === lineOf[pos], `byte ${pos} ^ ${mask} (event ${lineOf[pos]}) reported at index ${report.index}`);
            flips++;
          }
        }
        return `${flips} flips detected`;
      },
    });
  }
  return cases;
}
