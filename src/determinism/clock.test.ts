import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import {
  EVENT_STEP_MS,
  formatIsoMillis,
  MAX_TIME_MS,
  MIN_TIME_MS,
  nanos,
  parseIsoMillis,
  READ_STEP_MS,
  VirtualClock,
} from "./clock.ts";

type ClockVectors = {
  parse: { text: string; ms: number }[];
  format: { ms: number; text: string }[];
  invalidIso: string[];
  invalidMs: number[];
};
const vectors = (
  JSON.parse(readFileSync(new URL("../../conformance/vectors/determinism.json", import.meta.url), "utf8")) as {
    clock: ClockVectors;
  }
).clock;

describe("parseIsoMillis / formatIsoMillis", () => {
  it("matches the vectors", () => {
    for (const v of vectors.parse) expect(parseIsoMillis(v.text)).toBe(v.ms);
    for (const v of vectors.format) expect(formatIsoMillis(v.ms)).toBe(v.text);
  });

  it("agrees with Date for edge values and a sweep across the whole range (independent check)", () => {
    const edges = [0, -1, 1, 951782400000, 951868799999, MIN_TIME_MS, MAX_TIME_MS, -2203891200000, 4102444800000];
    const step = 7_919_119_999_973; // odd and not a multiple of a day: hits many dates and times of day
    for (let ms = MIN_TIME_MS; ms <= MAX_TIME_MS; ms += step) edges.push(ms);
    for (const ms of edges) {
      const expected = new Date(ms).toISOString();
      expect(formatIsoMillis(ms)).toBe(expected);
      expect(parseIsoMillis(expected)).toBe(ms);
    }
  });

  it("round-trips every day of 1999-2001 (leap and century rules)", () => {
    const start = parseIsoMillis("1999-01-01T00:00:00.000Z");
    for (let d = 0; d < 3 * 366; d++) {
      const ms = start + d * 86_400_000 + 45_296_789;
      expect(parseIsoMillis(formatIsoMillis(ms))).toBe(ms);
      expect(formatIsoMillis(ms)).toBe(new Date(ms).toISOString());
    }
  });

  it("refuses malformed or impossible timestamps with RangeError", () => {
    for (const text of vectors.invalidIso) expect(() => parseIsoMillis(text), text).toThrow(RangeError);
    expect(() => parseIsoMillis("2026-02-30T00:00:00.000Z")).toThrow(/does not exist/);
    expect(() => parseIsoMillis("2026-01-01T00:00:00Z")).toThrow(/YYYY-MM-DDTHH:mm:ss\.sssZ/);
  });

  it("accepts only real leap days", () => {
    expect(parseIsoMillis("2000-02-29T00:00:00.000Z")).toBe(951782400000);
    expect(parseIsoMillis("0000-02-29T00:00:00.000Z")).toBe(new Date("0000-02-29T00:00:00.000Z").getTime());
    expect(() => parseIsoMillis("2100-02-29T00:00:00.000Z")).toThrow(RangeError);
  });

  it("refuses non-strings and out-of-range or non-integer milliseconds, never emitting ±YYYYYY", () => {
    expect(() => parseIsoMillis(0 as unknown as string)).toThrow(TypeError);
    for (const ms of vectors.invalidMs) expect(() => formatIsoMillis(ms)).toThrow(RangeError);
    expect(() => formatIsoMillis(Number.NaN)).toThrow(/"ms"/);
    expect(() => formatIsoMillis("0" as unknown as number)).toThrow(TypeError);
    expect(() => formatIsoMillis(MAX_TIME_MS + 1)).toThrow(RangeError);
    expect(() => formatIsoMillis(MIN_TIME_MS - 1)).toThrow(RangeError);
  });
});

describe("formatIsoMillis / parseIsoMillis memos", () => {
  it("give what Date gives for any order of calls: within a second, across seconds, backwards, negative times", () => {
    const base = parseIsoMillis("2026-01-01T00:00:00.000Z");
    const times = [base, base + 1, base + 999, base + 1000, base + 999, base - 1, base - 1000, base + 500, -1, -1000, -999,
      0, 999, 1000, -0, MIN_TIME_MS, MIN_TIME_MS + 999, MAX_TIME_MS, MAX_TIME_MS - 999, base + 86_400_000, base + 1];
    for (let i = 0; i < 2000; i++) times.push(base + ((i * 7_919) % 5_003) - 2_500);
    for (const ms of times) expect(formatIsoMillis(ms), String(ms)).toBe(new Date(ms).toISOString());
  });

  it("still refuse bad times inside the last formatted second", () => {
    const base = parseIsoMillis("2026-01-01T00:00:00.000Z");
    expect(formatIsoMillis(base + 5)).toBe("2026-01-01T00:00:00.005Z");
    expect(() => formatIsoMillis(base + 5.5)).toThrow(RangeError);
    expect(() => formatIsoMillis(`${base + 5}` as unknown as number)).toThrow(TypeError);
    expect(formatIsoMillis(MAX_TIME_MS)).toBe("9999-12-31T23:59:59.999Z");
    expect(() => formatIsoMillis(MAX_TIME_MS + 0.5)).toThrow(RangeError);
  });

  it("parse again after any mix of good and bad text", () => {
    expect(() => parseIsoMillis(null as unknown as string)).toThrow(TypeError);
    expect(() => parseIsoMillis("")).toThrow(RangeError);
    expect(parseIsoMillis("1970-01-01T00:00:00.000Z")).toBe(0);
    expect(parseIsoMillis("2026-01-01T00:00:00.000Z")).toBe(1767225600000);
    expect(parseIsoMillis("2026-01-01T00:00:00.000Z")).toBe(1767225600000);
    expect(() => parseIsoMillis("2026-01-01T00:00:00.000z")).toThrow(RangeError);
    expect(() => parseIsoMillis(1767225600000 as unknown as string)).toThrow(TypeError);
    expect(parseIsoMillis("1970-01-01T00:00:00.000Z")).toBe(0);
    expect(new VirtualClock("2026-01-01T00:00:00.000Z").now()).toBe(1767225600000);
  });
});

describe("nanos", () => {
  it("converts to bigint nanoseconds and refuses negatives", () => {
    expect(nanos(0)).toBe(0n);
    expect(nanos(1500)).toBe(1_500_000_000n);
    expect(nanos(MAX_TIME_MS)).toBe(253_402_300_799_999_000_000n);
    expect(() => nanos(-1)).toThrow(RangeError);
    expect(() => nanos(0.5)).toThrow(RangeError);
    expect(() => nanos(1n as unknown as number)).toThrow(TypeError);
  });
});

describe("VirtualClock", () => {
  it("starts at the default epoch 1970-01-01T00:00:00.000Z", () => {
    const c = new VirtualClock();
    expect(c.epoch).toBe(0);
    expect(c.now()).toBe(0);
    expect(c.iso()).toBe("1970-01-01T00:00:00.000Z");
  });

  it("accepts an ISO or numeric epoch and refuses bad ones", () => {
    expect(new VirtualClock("2026-01-01T00:00:00.000Z").now()).toBe(1767225600000);
    expect(new VirtualClock(951782400000).iso()).toBe("2000-02-29T00:00:00.000Z");
    expect(() => new VirtualClock("2026-01-01T00:00:00Z")).toThrow(RangeError);
    expect(() => new VirtualClock(1.5)).toThrow(/"epoch"/);
    expect(() => new VirtualClock(MAX_TIME_MS + 1)).toThrow(RangeError);
    expect(() => new VirtualClock(null as unknown as number)).toThrow(TypeError);
  });

  it("tick() and read() return the current time and then step 1 ms; now() does not move", () => {
    expect(EVENT_STEP_MS).toBe(1);
    expect(READ_STEP_MS).toBe(1);
    const c = new VirtualClock("2026-01-01T00:00:00.000Z");
    const t0 = c.now();
    expect(c.now()).toBe(t0);
    expect(c.tick()).toBe(t0);
    expect(c.read()).toBe(t0 + 1);
    expect(c.tick()).toBe(t0 + 2);
    expect(c.now()).toBe(t0 + 3);
    expect(c.offset()).toBe(3);
    expect(c.offset(t0 + 10)).toBe(10);
    expect(c.iso(t0 + 1)).toBe("2026-01-01T00:00:00.001Z");
  });

  it("advance() moves forward only, by safe integers", () => {
    const c = new VirtualClock();
    c.advance(0);
    c.advance(86_400_000);
    expect(c.iso()).toBe("1970-01-02T00:00:00.000Z");
    expect(() => c.advance(-1)).toThrow(RangeError);
    expect(() => c.advance(0.5)).toThrow(RangeError);
    expect(() => c.advance(Number.MAX_SAFE_INTEGER + 1)).toThrow(RangeError);
    expect(() => c.advance("1" as unknown as number)).toThrow(TypeError);
    expect(c.now()).toBe(86_400_000);
  });

  it("refuses to pass 9999-12-31T23:59:59.999Z and leaves the clock unchanged", () => {
    const c = new VirtualClock(MAX_TIME_MS - 1);
    expect(c.tick()).toBe(MAX_TIME_MS - 1);
    expect(() => c.tick()).toThrow(RangeError);
    expect(() => c.read()).toThrow(RangeError);
    expect(() => c.advance(1)).toThrow(RangeError);
    expect(c.now()).toBe(MAX_TIME_MS);
    expect(c.iso()).toBe("9999-12-31T23:59:59.999Z");
  });

  it("fork() gives an independent clock with the same epoch", () => {
    const run = new VirtualClock(1000);
    run.tick();
    const tool = run.fork(run.now());
    expect(tool.epoch).toBe(1000);
    expect(tool.read()).toBe(1001);
    expect(tool.read()).toBe(1002);
    expect(run.now()).toBe(1001);
    run.advance(100);
    expect(tool.now()).toBe(1003);
    expect(tool.offset()).toBe(3);
    expect(run.fork().now()).toBe(1101);
    expect(() => run.fork(999)).toThrow(RangeError);
    expect(() => run.fork(1.5)).toThrow(/"startMs"/);
  });
});
