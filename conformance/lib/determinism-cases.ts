/**
 * Conformance cases for the virtual clock and the seeded PRNG (conformance/DETERMINISM.md), checked against
 * `vectors/determinism.json`. Runtime-neutral: the Node and Deno runners pass their own `ConformanceIO`.
 * @module
 */
import { bytesToHex } from "../../src/canonical/hex.ts";
import {
  deriveStream,
  formatIsoMillis,
  nanos,
  parseIsoMillis,
  parseSeed,
  streamKey,
  VirtualClock,
} from "../../src/determinism/mod.ts";
import type { RandomStream } from "../../src/determinism/mod.ts";
import { check } from "./types.ts";
import type { ConformanceCase, ConformanceIO } from "./types.ts";

/** Where the vectors live, relative to `conformance/`. */
export const DETERMINISM_VECTORS = "vectors/determinism.json";

type StreamVector = {
  seed: string;
  label: string;
  key: string;
  first64: string;
  u32: number[];
  float: number[];
  int6: number[];
  int2147483649: { values: number[]; position: number };
  split: { reads: number[]; hex: string };
  mixed: { ops: string[]; results: (string | number)[]; position: number };
};

type DeterminismVectors = {
  prng: {
    algorithm: string;
    streams: StreamVector[];
    derived: { seed: string; label: string; sublabel: string; derivedLabel: string; first32: string }[];
    seeds: {
      valid: { input: string | number; normalised: string }[];
      invalid: string[];
      invalidNumbers: number[];
    };
  };
  clock: {
    parse: { text: string; ms: number }[];
    format: { ms: number; text: string }[];
    invalidIso: string[];
    invalidMs: number[];
    steps: { eventMs: number; readMs: number };
    sequences: { epoch: string | number | null; ops: string[]; results: (string | number | null)[] }[];
    nanos: { ms: number; ns: string }[];
  };
};

function same(actual: unknown, expected: unknown, what: string): void {
  const a = JSON.stringify(actual);
  const e = JSON.stringify(expected);
  check(a === e, `${what}: expected ${e}, got ${a}`);
}

function refuses(fn: () => unknown, kind: typeof RangeError | typeof TypeError, what: string): void {
  try {
    fn();
  } catch (error) {
    check(error instanceof kind, `${what}: expected ${kind.name}, got ${String(error)}`);
    return;
  }
  throw new Error(`${what}: expected ${kind.name}, but it was accepted`);
}

function repeat<T>(count: number, fn: () => T): T[] {
  return Array.from({ length: count }, fn);
}

function runMixed(stream: RandomStream, ops: string[]): (string | number)[] {
  return ops.map((op) => {
    const [name, arg] = op.split(":");
    if (name === "bytes") return bytesToHex(stream.bytes(Number(arg)));
    if (name === "u32") return stream.u32();
    if (name === "float") return stream.float();
    if (name === "int") return stream.int(Number(arg));
    throw new Error(`unknown PRNG op ${JSON.stringify(op)} in ${DETERMINISM_VECTORS}`);
  });
}

function runClockOp(clock: VirtualClock, op: string): string | number | null {
  const [name, arg] = op.split(":");
  try {
    switch (name) {
      case "tick":
        return clock.tick();
      case "read":
        return clock.read();
      case "now":
        return clock.now();
      case "iso":
        return clock.iso();
      case "offset":
        return clock.offset();
      case "advance":
        clock.advance(Number(arg));
        return null;
    }
  } catch (error) {
    if (error instanceof RangeError) return "RangeError";
    throw error;
  }
  throw new Error(`unknown clock op ${JSON.stringify(op)} in ${DETERMINISM_VECTORS}`);
}

function streamCase(v: StreamVector): ConformanceCase {
  return {
    name: `determinism/prng/stream seed=${v.seed} label=${v.label}`,
    run() {
      const fresh = (): RandomStream => deriveStream(v.seed, v.label);
      same(bytesToHex(streamKey(v.seed, v.label)), v.key, "stream key");
      const s = fresh();
      same(bytesToHex(s.bytes(64)), v.first64, "first 64 bytes");
      same(s.position, 64, "position after bytes(64)");
      const u = fresh();
      same(repeat(v.u32.length, () => u.u32()), v.u32, "u32()");
      const f = fresh();
      same(repeat(v.float.length, () => f.float()), v.float, "float()");
      const d = fresh();
      same(repeat(v.int6.length, () => d.int(6)), v.int6, "int(6)");
      const r = fresh();
      same(repeat(v.int2147483649.values.length, () => r.int(2_147_483_649)), v.int2147483649.values, "int(2147483649)");
      same(r.position, v.int2147483649.position, "position after rejection sampling");
      const sp = fresh();
      same(v.split.reads.map((n) => bytesToHex(sp.bytes(n))).join(""), v.split.hex, "bytes split across calls");
      check(v.first64.startsWith(v.split.hex), "vector file: split.hex must be a prefix of first64");
      const m = fresh();
      same(runMixed(m, v.mixed.ops), v.mixed.results, "mixed reads");
      same(m.position, v.mixed.position, "position after mixed reads");
      return [v.key, v.first64, v.u32.join(","), v.float.join(","), v.int6.join(","), v.mixed.position].join("|");
    },
  };
}

/**
 * The determinism conformance cases: every vector in `vectors/determinism.json`.
 * @param io file access rooted at `conformance/`
 * @returns the named cases; each `run()` throws on a mismatch and returns a fingerprint string
 * @throws Error when the vector file cannot be read or parsed (from `io.readText` / `JSON.parse`)
 * @example for (const c of determinismCases(io)) c.run();
 */
export function determinismCases(io: ConformanceIO): ConformanceCase[] {
  const vectors = JSON.parse(io.readText(DETERMINISM_VECTORS)) as DeterminismVectors;
  check(vectors.prng.algorithm === "reach-wasm/prng/v1", `${DETERMINISM_VECTORS}: unknown PRNG algorithm`);
  const { prng, clock } = vectors;
  const cases: ConformanceCase[] = prng.streams.map(streamCase);

  cases.push({
    name: "determinism/prng/derived streams",
    run() {
      return prng.derived
        .map((v) => {
          const child = deriveStream(v.seed, v.label).derive(v.sublabel);
          same(child.label, v.derivedLabel, "derived label");
          same(bytesToHex(child.bytes(32)), v.first32, "derived stream, first 32 bytes");
          same(bytesToHex(deriveStream(v.seed, v.derivedLabel).bytes(32)), v.first32, "deriveStream(seed, derivedLabel)");
          return v.first32;
        })
        .join("|");
    },
  });

  cases.push({
    name: "determinism/prng/independent streams",
    run() {
      const [a, b] = [prng.streams[0]!, prng.streams[1]!];
      const sa = deriveStream(a.seed, a.label);
      const sb = deriveStream(b.seed, b.label);
      let ha = "";
      let hb = "";
      for (let i = 0; i < 8; i++) {
        ha += bytesToHex(sa.bytes(8));
        hb += bytesToHex(sb.bytes(8));
      }
      same(ha, a.first64, "interleaved stream A");
      same(hb, b.first64, "interleaved stream B");
      return ha + hb;
    },
  });

  cases.push({
    name: "determinism/prng/seeds",
    run() {
      for (const v of prng.seeds.valid) same(parseSeed(v.input), v.normalised, `parseSeed(${JSON.stringify(v.input)})`);
      same(parseSeed(18_446_744_073_709_551_615n), "18446744073709551615", "parseSeed(2^64-1 as bigint)");
      refuses(() => parseSeed(18_446_744_073_709_551_616n), RangeError, "parseSeed(2^64 as bigint)");
      for (const s of prng.seeds.invalid) refuses(() => parseSeed(s), RangeError, `parseSeed(${JSON.stringify(s)})`);
      for (const n of prng.seeds.invalidNumbers) refuses(() => parseSeed(n), RangeError, `parseSeed(${n})`);
      return prng.seeds.valid.map((v) => v.normalised).join(",");
    },
  });

  cases.push({
    name: "determinism/clock/parse",
    run() {
      for (const v of clock.parse) same(parseIsoMillis(v.text), v.ms, `parseIsoMillis(${JSON.stringify(v.text)})`);
      for (const text of clock.invalidIso) {
        refuses(() => parseIsoMillis(text), RangeError, `parseIsoMillis(${JSON.stringify(text)})`);
        refuses(() => new VirtualClock(text), RangeError, `new VirtualClock(${JSON.stringify(text)})`);
      }
      return clock.parse.map((v) => v.ms).join(",");
    },
  });

  cases.push({
    name: "determinism/clock/format",
    run() {
      for (const v of clock.format) same(formatIsoMillis(v.ms), v.text, `formatIsoMillis(${v.ms})`);
      for (const v of clock.parse) same(formatIsoMillis(v.ms), v.text, `formatIsoMillis(${v.ms}) round trip`);
      for (const ms of clock.invalidMs) refuses(() => formatIsoMillis(ms), RangeError, `formatIsoMillis(${ms})`);
      return clock.format.map((v) => v.text).join(",");
    },
  });

  cases.push({
    name: "determinism/clock/sequences",
    run() {
      const c = new VirtualClock();
      same(c.epoch, 0, "default epoch");
      const t = c.tick();
      same(c.now() - t, clock.steps.eventMs, "event step");
      const r = c.read();
      same(c.now() - r, clock.steps.readMs, "read step");
      const out: string[] = [];
      for (const seq of clock.sequences) {
        const vc = seq.epoch === null ? new VirtualClock() : new VirtualClock(seq.epoch);
        const results = seq.ops.map((op) => runClockOp(vc, op));
        same(results, seq.results, `clock sequence from epoch ${JSON.stringify(seq.epoch)}`);
        out.push(results.join(","));
      }
      return out.join("|");
    },
  });

  cases.push({
    name: "determinism/clock/nanos",
    run() {
      for (const v of clock.nanos) same(nanos(v.ms).toString(), v.ns, `nanos(${v.ms})`);
      refuses(() => nanos(-1), RangeError, "nanos(-1)");
      return clock.nanos.map((v) => v.ns).join(",");
    },
  });

  return cases;
}
