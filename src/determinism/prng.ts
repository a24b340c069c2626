/**
 * The seeded random streams of a run (seed 003 §3.3 "All non-deterministic sources (time, random) are mocked";
 * ARCHITECTURE.md "Determinism"). Normative description, with a worked example: conformance/DETERMINISM.md.
 *
 * Algorithm `reach-wasm/prng/v1` (SHA-256 in counter mode):
 *
 * 1. Seed: an integer 0 … 2^64−1 written in decimal, digits only, no sign, no leading zeros except `"0"`
 *    (`parseSeed`).
 * 2. Stream key: `key = SHA-256(utf8("reach-wasm/prng/v1") ‖ 0x00 ‖ utf8(seed) ‖ 0x00 ‖ utf8(label))`, where
 *    `label` names the stream: `run`, `step:<stepId>`, `invocation:<invocationId>`, … A derived stream
 *    `stream.derive(sub)` is the stream with label `<label>/<sub>`.
 * 3. Output: block i (i = 0, 1, 2, …) is `SHA-256(key ‖ u64be(i))`; the stream is block 0 ‖ block 1 ‖ …, and
 *    every read consumes the next bytes of it, contiguously, whatever mix of reads is used:
 *    - `bytes(n)`: the next n bytes;
 *    - `u32()`: the next 4 bytes as an unsigned big-endian integer;
 *    - `float()`: the next 8 bytes as an unsigned big-endian 64-bit integer x; result `(x >> 11) / 2^53`, in [0, 1);
 *    - `int(max)`: repeat { x = u32() } until x < 2^32 − (2^32 mod max); result `x mod max` (unbiased; at
 *      least one u32 is consumed, even for max = 1).
 *
 * Each tool invocation gets its own stream, so the values one invocation sees do not depend on how many values
 * other invocations drew, or in which order they ran.
 * @module
 */
import { sha256, sha256Hex, utf8 } from "../canonical/mod.ts";

/** The domain-separation prefix of every stream key; changing the algorithm means changing this. */
export const PRNG_DOMAIN = "reach-wasm/prng/v1";

/** Largest seed, 2^64 − 1. */
export const MAX_SEED = 18_446_744_073_709_551_615n;

/** Largest `n` accepted by `RandomStream.bytes(n)`. */
export const MAX_BYTES_PER_CALL = 65_536;

const BLOCK_SIZE = 32;
const TWO_POW_32 = 4_294_967_296;
const TWO_POW_53 = 9_007_199_254_740_992;
const SEED_PATTERN = /^(?:0|[1-9][0-9]*)$/;
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** Whether a string has no lone surrogate: ES2024 `String.prototype.isWellFormed` where the runtime has it. */
const isWellFormed: (s: string) => boolean = (() => {
  const native = (String.prototype as { isWellFormed?: (this: string) => boolean }).isWellFormed;
  if (typeof native === "function") return (s: string) => native.call(s);
  return (s: string) => !LONE_SURROGATE.test(s);
})();

function typeName(value: unknown): string {
  if (value === null) return "null";
  if (typeof value === "string") return `string of length ${value.length}`;
  return typeof value;
}

/**
 * Check and normalise a seed: an integer 0 … 2^64−1.
 * @param seed a decimal string (digits only, no sign, no leading zeros except "0"), a non-negative safe integer,
 *   or a bigint
 * @returns the seed as a canonical decimal string
 * @throws TypeError when `seed` is not a string, number or bigint
 * @throws RangeError when `seed` is not an integer in 0 … 2^64−1 in the accepted form
 * @example parseSeed(42n) // "42"
 */
export function parseSeed(seed: string | number | bigint): string {
  if (typeof seed === "string") {
    // Fewer than 20 digits is below 10^19 < 2^64, so only a 20-digit seed needs the bigint comparison.
    if (seed.length > 20 || !SEED_PATTERN.test(seed) || (seed.length === 20 && BigInt(seed) > MAX_SEED)) {
      const shown = seed.length > 30 ? `a string of length ${seed.length}` : JSON.stringify(seed);
      throw new RangeError(
        `"seed" expected a decimal integer 0..18446744073709551615 (digits only, no sign, no leading zeros), got ${shown}`,
      );
    }
    return seed;
  }
  if (typeof seed === "number") {
    if (!Number.isSafeInteger(seed) || seed < 0) {
      throw new RangeError(
        `"seed" expected a non-negative safe integer; pass larger seeds (up to 2^64-1) as a decimal string or bigint, got ${seed}`,
      );
    }
    return String(seed);
  }
  if (typeof seed === "bigint") {
    if (seed < 0n || seed > MAX_SEED) {
      throw new RangeError(`"seed" expected an integer 0..18446744073709551615, got ${seed}`);
    }
    return seed.toString(10);
  }
  throw new TypeError(`"seed" expected a decimal string, number or bigint, got ${typeName(seed)}`);
}

function assertLabel(label: unknown, name: string): asserts label is string {
  if (typeof label !== "string") throw new TypeError(`"${name}" expected a non-empty string, got ${typeName(label)}`);
  if (label.length === 0) throw new RangeError(`"${name}" must not be empty; name the stream, e.g. "run"`);
  if (!isWellFormed(label)) {
    throw new RangeError(`"${name}" contains a lone UTF-16 surrogate, which has no UTF-8 encoding`);
  }
}

/**
 * The key of a stream: `SHA-256(utf8("reach-wasm/prng/v1") ‖ 0x00 ‖ utf8(seed) ‖ 0x00 ‖ utf8(label))`.
 * @param seed the seed (see `parseSeed`)
 * @param label the stream's name, a non-empty well-formed string
 * @returns the 32-byte key
 * @throws TypeError | RangeError as `parseSeed`, or when `label` is not a non-empty well-formed string
 * @example streamKey("0", "run").length // 32
 */
export function streamKey(seed: string | number | bigint, label: string): Uint8Array {
  const seedText = parseSeed(seed);
  assertLabel(label, "label");
  return keyOf(seedText, label);
}

/** {@link streamKey} of a checked seed and label. */
function keyOf(seedText: string, label: string): Uint8Array {
  // One encoding pass: NUL is the byte 0x00 in UTF-8, and a well-formed label cannot pair with its neighbours.
  return sha256(utf8(keyText(seedText, label)));
}

function keyText(seedText: string, label: string): string {
  return `${PRNG_DOMAIN}\u0000${seedText}\u0000${label}`;
}

/**
 * Write SHA-256(`data`) into `out` at `at`: `sha256Hex`, then the hex digits back to bytes. The same digest as `sha256`
 * (for a string, of its UTF-8 bytes; keys hash well-formed text only), but faster for these short inputs on the native
 * backend, which then hashes a string without a separate encoding pass and answers with a string rather than a new
 * buffer (Node 20: ~0.7 µs against ~1.5 µs warm, and ~2 µs less per digest in a cold tool invocation). A stream makes
 * two such digests (its key and first block) before its first bytes.
 */
function digestInto(data: Uint8Array | string, out: Uint8Array, at: number): void {
  const hex = sha256Hex(data); // 64 lowercase hex digits
  for (let i = 0; i < BLOCK_SIZE; i++) {
    const hi = hex.charCodeAt(2 * i);
    const lo = hex.charCodeAt(2 * i + 1);
    out[at + i] = ((hi < 58 ? hi - 48 : hi - 87) << 4) | (lo < 58 ? lo - 48 : lo - 87);
  }
}

/**
 * Derive the random stream named `label` from a seed.
 * @param seed the run's seed: a decimal string, a non-negative safe integer or a bigint, 0 … 2^64−1
 * @param label the stream's name, e.g. `"run"`, `"step:<stepId>"`, `"invocation:<invocationId>"`
 * @returns a fresh `RandomStream` at position 0
 * @throws TypeError | RangeError when `seed` or `label` is not acceptable (see `parseSeed`)
 * @example deriveStream("42", "run").u32()
 */
export function deriveStream(seed: string | number | bigint, label: string): RandomStream {
  return new RandomStream(seed, label);
}

/**
 * One deterministic random stream (algorithm `reach-wasm/prng/v1`, see the module documentation). Create it with
 * `deriveStream`; reads consume the stream contiguously, and `position` counts the bytes consumed.
 * @example
 * const s = deriveStream("0", "run");
 * s.bytes(5); s.bytes(40); // together, the first 45 bytes of the stream
 */
export class RandomStream {
  /** The seed, as a canonical decimal string. */
  readonly seed: string;
  /** The stream's label. */
  readonly label: string;
  /** `key ‖ u64be(block index)`, made at the first read (see the constructor). */
  #input: Uint8Array | null = null;
  /** The current block, number `#blockIndex` (made with `#input`). */
  #block: Uint8Array | null = null;
  #blockIndex = -1;
  #position = 0;

  /**
   * The same as `deriveStream(seed, label)`.
   * @param seed the run's seed (see `parseSeed`)
   * @param label the stream's name, a non-empty well-formed string
   * @throws TypeError | RangeError when `seed` or `label` is not acceptable
   * @example new RandomStream("0", "run").position // 0
   */
  constructor(seed: string | number | bigint, label: string) {
    this.seed = parseSeed(seed);
    assertLabel(label, "label");
    this.label = label;
    // The key (a SHA-256) is derived at the first read, not here: many invocations never read their stream, and the
    // bytes do not depend on when the key is made. Seed and label are checked now, so errors surface here as before.
  }

  /** Number of bytes of the stream consumed so far (recorded on the tape). */
  get position(): number {
    return this.#position;
  }

  /**
   * The stream with label `<label>/<sublabel>` and the same seed, at position 0 (independent of this one).
   * @param sublabel a non-empty well-formed string
   * @returns a fresh `RandomStream`
   * @throws TypeError | RangeError when `sublabel` is not a non-empty well-formed string
   * @example deriveStream("0", "run").derive("x").label // "run/x"
   */
  derive(sublabel: string): RandomStream {
    assertLabel(sublabel, "sublabel");
    return deriveStream(this.seed, `${this.label}/${sublabel}`);
  }

  /**
   * The next `n` bytes of the stream.
   * @param n an integer 0 … 65536
   * @returns a new Uint8Array of length `n`
   * @throws TypeError when `n` is not a number
   * @throws RangeError when `n` is not an integer in 0 … 65536
   * @example deriveStream("0", "run").bytes(16).length // 16
   */
  bytes(n: number): Uint8Array {
    if (typeof n !== "number") throw new TypeError(`"n" expected an integer 0..${MAX_BYTES_PER_CALL}, got ${typeName(n)}`);
    if (!Number.isInteger(n) || n < 0 || n > MAX_BYTES_PER_CALL) {
      throw new RangeError(`"n" expected an integer 0..${MAX_BYTES_PER_CALL}; read larger amounts in pieces, got ${n}`);
    }
    const out = new Uint8Array(n);
    let filled = 0;
    while (filled < n) {
      const index = Math.floor(this.#position / BLOCK_SIZE);
      const within = this.#position % BLOCK_SIZE;
      const block = this.#blockAt(index);
      const take = Math.min(BLOCK_SIZE - within, n - filled);
      out.set(block.subarray(within, within + take), filled);
      filled += take;
      this.#position += take;
    }
    return out;
  }

  /**
   * The next 4 bytes as an unsigned big-endian integer.
   * @returns an integer 0 … 2^32−1
   * @example deriveStream("0", "run").u32()
   */
  u32(): number {
    const b = this.bytes(4);
    return ((b[0]! << 24) | (b[1]! << 16) | (b[2]! << 8) | b[3]!) >>> 0;
  }

  /**
   * A float in [0, 1): the next 8 bytes as an unsigned big-endian 64-bit x, then `(x >> 11) / 2^53`.
   * @returns a number in [0, 1) with 53 random bits
   * @example deriveStream("0", "run").float() < 1 // true
   */
  float(): number {
    const hi = this.u32();
    const lo = this.u32();
    return (hi * 2_097_152 + (lo >>> 11)) / TWO_POW_53;
  }

  /**
   * An unbiased integer in [0, maxExclusive) by rejection sampling on `u32()`: draw x until
   * x < 2^32 − (2^32 mod maxExclusive), then return x mod maxExclusive.
   * @param maxExclusive an integer 1 … 2^32
   * @returns an integer 0 … maxExclusive−1
   * @throws TypeError when `maxExclusive` is not a number
   * @throws RangeError when `maxExclusive` is not an integer in 1 … 2^32
   * @example deriveStream("0", "run").int(6) // a die roll, 0..5
   */
  int(maxExclusive: number): number {
    if (typeof maxExclusive !== "number") {
      throw new TypeError(`"maxExclusive" expected an integer 1..4294967296, got ${typeName(maxExclusive)}`);
    }
    if (!Number.isInteger(maxExclusive) || maxExclusive < 1 || maxExclusive > TWO_POW_32) {
      throw new RangeError(`"maxExclusive" expected an integer 1..4294967296, got ${maxExclusive}`);
    }
    const limit = TWO_POW_32 - (TWO_POW_32 % maxExclusive);
    for (;;) {
      const x = this.u32();
      if (x < limit) return x % maxExclusive;
    }
  }

  #blockAt(index: number): Uint8Array {
    let input = this.#input;
    let block = this.#block;
    if (input === null || block === null) {
      input = this.#input = new Uint8Array(BLOCK_SIZE + 8);
      block = this.#block = new Uint8Array(BLOCK_SIZE);
      digestInto(keyText(this.seed, this.label), input, 0);
    } else if (index === this.#blockIndex) {
      return block;
    }
    // u64be(index): index < 2^53, so the high word is exact.
    const hi = Math.floor(index / TWO_POW_32);
    const lo = index >>> 0;
    input[BLOCK_SIZE] = hi >>> 24;
    input[BLOCK_SIZE + 1] = (hi >>> 16) & 255;
    input[BLOCK_SIZE + 2] = (hi >>> 8) & 255;
    input[BLOCK_SIZE + 3] = hi & 255;
    input[BLOCK_SIZE + 4] = lo >>> 24;
    input[BLOCK_SIZE + 5] = (lo >>> 16) & 255;
    input[BLOCK_SIZE + 6] = (lo >>> 8) & 255;
    input[BLOCK_SIZE + 7] = lo & 255;
    digestInto(input, block, 0);
    this.#blockIndex = index;
    return block;
  }
}
