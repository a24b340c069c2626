import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { afterEach, describe, expect, it } from "vitest";
import { determinismCases } from "../../conformance/lib/determinism-cases.ts";
import { bytesToHex } from "../canonical/hex.ts";
import { getSha256Backend, nobleBackend, setSha256Backend } from "../canonical/sha256.ts";
import type { Sha256Backend } from "../canonical/sha256.ts";
import { nativeSha256Backend } from "../../tests/support/platform.ts";
import { deriveStream, MAX_BYTES_PER_CALL, parseSeed, PRNG_DOMAIN, RandomStream, streamKey } from "./prng.ts";

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
};
const conformanceDir = new URL("../../conformance/", import.meta.url);
const vectors = JSON.parse(readFileSync(new URL("vectors/determinism.json", conformanceDir), "utf8")) as {
  prng: { streams: StreamVector[]; derived: { seed: string; derivedLabel: string; first32: string }[] };
};

/** Independent re-implementation with node:crypto and Buffer, sharing no code with prng.ts. */
function referenceStream(seed: string, label: string, length: number): Buffer {
  const key = createHash("sha256")
    .update(Buffer.concat([Buffer.from("reach-wasm/prng/v1"), Buffer.from([0]), Buffer.from(seed), Buffer.from([0]), Buffer.from(label)]))
    .digest();
  const blocks: Buffer[] = [];
  for (let i = 0; blocks.length * 32 < length; i++) {
    const counter = Buffer.alloc(8);
    counter.writeBigUInt64BE(BigInt(i));
    blocks.push(createHash("sha256").update(Buffer.concat([key, counter])).digest());
  }
  return Buffer.concat(blocks).subarray(0, length);
}

describe("reach-wasm/prng/v1 vectors", () => {
  it("has the documented domain string", () => {
    expect(PRNG_DOMAIN).toBe("reach-wasm/prng/v1");
  });

  it.each(vectors.prng.streams)("stream seed=$seed label=$label matches the vectors", (v) => {
    expect(bytesToHex(streamKey(v.seed, v.label))).toBe(v.key);
    expect(bytesToHex(deriveStream(v.seed, v.label).bytes(64))).toBe(v.first64);
    const u = deriveStream(v.seed, v.label);
    expect(v.u32.map(() => u.u32())).toEqual(v.u32);
    const f = deriveStream(v.seed, v.label);
    expect(v.float.map(() => f.float())).toEqual(v.float);
    const d = deriveStream(v.seed, v.label);
    expect(v.int6.map(() => d.int(6))).toEqual(v.int6);
    const s = deriveStream(v.seed, v.label);
    expect(v.split.reads.map((n) => bytesToHex(s.bytes(n))).join("")).toBe(v.split.hex);
    expect(s.position).toBe(45);
  });

  it.each(vectors.prng.streams)("stream seed=$seed label=$label agrees with node:crypto (independent)", (v) => {
    const ref = referenceStream(v.seed, v.label, 200);
    expect(ref.subarray(0, 64).toString("hex")).toBe(v.first64);
    expect(bytesToHex(deriveStream(v.seed, v.label).bytes(200))).toBe(ref.toString("hex"));
    expect([0, 4, 8, 12].map((o) => ref.readUInt32BE(o))).toEqual(v.u32);
    expect([0, 8, 16].map((o) => Number(ref.readBigUInt64BE(o) >> 11n) / 2 ** 53)).toEqual(v.float);
    // Rejection sampling, recomputed from the reference bytes.
    const sample = (max: number, count: number): { values: number[]; position: number } => {
      const limit = 2 ** 32 - (2 ** 32 % max);
      const values: number[] = [];
      let at = 0;
      while (values.length < count) {
        const x = ref.readUInt32BE(at);
        at += 4;
        if (x < limit) values.push(x % max);
      }
      return { values, position: at };
    };
    expect(sample(6, v.int6.length).values).toEqual(v.int6);
    expect(sample(2_147_483_649, v.int2147483649.values.length)).toEqual(v.int2147483649);
  });

  it("derived streams agree with node:crypto", () => {
    for (const v of vectors.prng.derived) {
      expect(referenceStream(v.seed, v.derivedLabel, 32).toString("hex")).toBe(v.first32);
    }
  });

  it("runs every determinism conformance case under Node", () => {
    const io = {
      readBytes: (p: string) => new Uint8Array(readFileSync(new URL(p, conformanceDir))),
      readText: (p: string) => readFileSync(new URL(p, conformanceDir), "utf8"),
      list: () => [],
    };
    const cases = determinismCases(io);
    expect(cases.length).toBeGreaterThanOrEqual(6 + 6);
    for (const c of cases) expect(typeof c.run(), c.name).toBe("string");
  });
});

describe("RandomStream", () => {
  it("consumes the stream contiguously across reads of any kind and size", () => {
    const ref = referenceStream("7", "run", 70_000);
    const s = deriveStream(7, "run");
    const parts = [s.bytes(0), s.bytes(1), s.bytes(31), s.bytes(33), s.bytes(MAX_BYTES_PER_CALL)];
    expect(bytesToHex(new Uint8Array(Buffer.concat(parts)))).toBe(ref.subarray(0, 65 + MAX_BYTES_PER_CALL).toString("hex"));
    expect(s.position).toBe(65 + MAX_BYTES_PER_CALL);
    const at = s.position;
    expect(s.u32()).toBe(ref.readUInt32BE(at));
    expect(s.float()).toBe(Number(ref.readBigUInt64BE(at + 4) >> 11n) / 2 ** 53);
    expect(s.position).toBe(at + 12);
  });

  it("interleaving two streams gives the same values as reading them one after the other", () => {
    const labels = ["invocation:a", "invocation:b"];
    const inSequence = labels.map((l) => {
      const s = deriveStream("42", l);
      return [bytesToHex(s.bytes(3)), s.u32(), s.float(), s.int(6), bytesToHex(s.bytes(40))];
    });
    const [a, b] = labels.map((l) => deriveStream("42", l)) as [RandomStream, RandomStream];
    const ra: unknown[] = [];
    const rb: unknown[] = [];
    rb.push(bytesToHex(b.bytes(3)));
    ra.push(bytesToHex(a.bytes(3)));
    ra.push(a.u32());
    rb.push(b.u32());
    rb.push(b.float());
    rb.push(b.int(6));
    ra.push(a.float());
    ra.push(a.int(6));
    ra.push(bytesToHex(a.bytes(40)));
    rb.push(bytesToHex(b.bytes(40)));
    expect([ra, rb]).toEqual(inSequence);
    expect(inSequence[0]).not.toEqual(inSequence[1]);
  });

  it("derive(sub) is the stream labelled <label>/<sub>, independent of the parent's position", () => {
    const parent = deriveStream("42", "run");
    parent.bytes(100);
    const child = parent.derive("step:s1");
    expect(child.label).toBe("run/step:s1");
    expect(child.seed).toBe("42");
    expect(child.position).toBe(0);
    expect(bytesToHex(child.bytes(32))).toBe(bytesToHex(deriveStream("42", "run/step:s1").bytes(32)));
    expect(parent.position).toBe(100);
    expect(() => parent.derive("")).toThrow(RangeError);
  });

  it("different seeds and labels give different streams", () => {
    const first = (seed: string, label: string) => bytesToHex(deriveStream(seed, label).bytes(32));
    expect(first("0", "run")).not.toBe(first("1", "run"));
    expect(first("0", "run")).not.toBe(first("0", "run/x"));
    expect(first("1", "0run")).not.toBe(first("10", "run")); // the 0x00 separator keeps seed and label apart
  });

  it("int() is unbiased in range and int(2^32) equals u32()", () => {
    const a = deriveStream("0", "run");
    const b = deriveStream("0", "run");
    for (let i = 0; i < 4; i++) expect(a.int(2 ** 32)).toBe(b.u32());
    const c = deriveStream("0", "dice");
    const counts = [0, 0, 0, 0, 0, 0];
    for (let i = 0; i < 6000; i++) counts[c.int(6)]!++;
    for (const n of counts) expect(n).toBeGreaterThan(850);
    const one = deriveStream("0", "run");
    expect(one.int(1)).toBe(0);
    expect(one.position).toBe(4);
  });

  it("float() is in [0, 1)", () => {
    const s = deriveStream("3", "run");
    for (let i = 0; i < 1000; i++) {
      const x = s.float();
      expect(x >= 0 && x < 1).toBe(true);
    }
  });

  it("refuses bad arguments with errors naming them", () => {
    const s = deriveStream("0", "run");
    expect(() => s.bytes(-1)).toThrow(RangeError);
    expect(() => s.bytes(MAX_BYTES_PER_CALL + 1)).toThrow(/"n"/);
    expect(() => s.bytes(1.5)).toThrow(RangeError);
    expect(() => s.bytes("4" as unknown as number)).toThrow(TypeError);
    expect(() => s.int(0)).toThrow(/"maxExclusive"/);
    expect(() => s.int(2 ** 32 + 1)).toThrow(RangeError);
    expect(() => s.int(2.5)).toThrow(RangeError);
    expect(() => s.int(6n as unknown as number)).toThrow(TypeError);
    expect(s.position).toBe(0);
    expect(() => deriveStream("0", "")).toThrow(/"label"/);
    expect(() => deriveStream("0", "\uD800")).toThrow(RangeError);
    expect(() => deriveStream("0", 1 as unknown as string)).toThrow(TypeError);
    expect(() => new RandomStream("01", "run")).toThrow(/"seed"/);
  });
});

describe("parseSeed", () => {
  it("normalises strings, numbers and bigints", () => {
    expect(parseSeed("0")).toBe("0");
    expect(parseSeed("18446744073709551615")).toBe("18446744073709551615");
    expect(parseSeed(42)).toBe("42");
    expect(parseSeed(18_446_744_073_709_551_615n)).toBe("18446744073709551615");
    expect(parseSeed(0n)).toBe("0");
  });

  it.each(["-1", "01", "1.5", "18446744073709551616", "abc", "", " 1", "+1", "1e3", "0x1", "\u0661"])(
    "refuses %j with RangeError",
    (s) => {
      expect(() => parseSeed(s)).toThrow(RangeError);
      expect(() => parseSeed(s)).toThrow(/"seed"/);
    },
  );

  it("refuses 2^64, negative and unsafe numbers, and other types", () => {
    expect(() => parseSeed(2n ** 64n)).toThrow(RangeError);
    expect(() => parseSeed(-1n)).toThrow(RangeError);
    expect(() => parseSeed(2 ** 64)).toThrow(RangeError);
    expect(() => parseSeed(2 ** 53)).toThrow(RangeError);
    expect(() => parseSeed(-1)).toThrow(RangeError);
    expect(() => parseSeed(1.5)).toThrow(RangeError);
    expect(() => parseSeed(Number.NaN)).toThrow(RangeError);
    expect(() => parseSeed(null as unknown as string)).toThrow(TypeError);
    expect(() => parseSeed({} as unknown as string)).toThrow(TypeError);
  });
});

describe("RandomStream digests", () => {
  const initial = getSha256Backend();
  afterEach(() => setSha256Backend(initial));

  it.each([nobleBackend, nativeSha256Backend])("agree with node:crypto on every backend ($name), for non-ASCII labels too", (backend) => {
    setSha256Backend(backend);
    for (const [seed, label] of [["0", "run"], ["18446744073709551615", "invocation:é😀/ü"], ["42", "x".repeat(300)]] as const) {
      expect(bytesToHex(deriveStream(seed, label).bytes(5000))).toBe(referenceStream(seed, label, 5000).toString("hex"));
      expect(bytesToHex(streamKey(seed, label))).toBe(
        createHash("sha256").update(`reach-wasm/prng/v1\u0000${seed}\u0000${label}`, "utf8").digest("hex"));
    }
  });

  it("derives the key at the first read, not before; bad arguments still fail at once", () => {
    let digests = 0;
    const counting: Sha256Backend = {
      name: "counting",
      digest: (d) => (digests++, nobleBackend.digest(d)),
      hex: (d) => (digests++, bytesToHex(nobleBackend.digest(typeof d === "string" ? new TextEncoder().encode(d) : d))),
    };
    setSha256Backend(counting);
    digests = 0;
    const streams = Array.from({ length: 5 }, (_, i) => deriveStream("9", `invocation:${i}`));
    expect(digests).toBe(0);
    expect(bytesToHex(streams[3]!.bytes(40))).toBe(referenceStream("9", "invocation:3", 40).toString("hex"));
    expect(digests).toBe(3); // the key, block 0, block 1
    expect(() => new RandomStream("9", "\uDC00")).toThrow(RangeError);
    expect(() => new RandomStream("99999999999999999999", "run")).toThrow(/"seed"/);
    expect(() => new RandomStream("18446744073709551616", "run")).toThrow(/"seed"/);
    expect(new RandomStream("18446744073709551615", "run").seed).toBe("18446744073709551615");
  });
});
