/**
 * The virtual clock of a run (seed 003 §3.3 "All non-deterministic sources (time, random) are mocked";
 * ARCHITECTURE.md "Determinism").
 *
 * Time is an integer number of milliseconds since the Unix epoch (1970-01-01T00:00:00.000Z), restricted to
 * the years 0000–9999 so that every value has exactly one ISO form, `YYYY-MM-DDTHH:mm:ss.sssZ`
 * (seed 003 §3.3 rule 1, "ISO 8601 UTC with millisecond precision"). Rules (conformance/DETERMINISM.md):
 *
 * - a run's clock starts at a fixed epoch (default `1970-01-01T00:00:00.000Z`);
 * - every event is stamped with `tick()`: the current value, after which the clock moves on by
 *   `EVENT_STEP_MS` (1 ms);
 * - every clock read made by a tool is answered by `read()`: the current value, after which the clock moves
 *   on by `READ_STEP_MS` (1 ms);
 * - nothing else moves the clock except an explicit `advance(ms)`.
 *
 * Calendar arithmetic is proleptic Gregorian without leap seconds (the same as ECMAScript `Date`), done here
 * with integer formulas so that no `Date` object is involved.
 * @module
 */

/** How far `tick()` moves the clock after stamping an event, in milliseconds. */
export const EVENT_STEP_MS = 1;

/** How far `read()` moves the clock after answering a tool's clock read, in milliseconds. */
export const READ_STEP_MS = 1;

/** Default epoch of a run: `1970-01-01T00:00:00.000Z`. */
export const DEFAULT_EPOCH_MS = 0;

/** Smallest representable time, `0000-01-01T00:00:00.000Z`, in ms since the Unix epoch. */
export const MIN_TIME_MS = -62_167_219_200_000;

/** Largest representable time, `9999-12-31T23:59:59.999Z`, in ms since the Unix epoch. */
export const MAX_TIME_MS = 253_402_300_799_999;

const MS_PER_DAY = 86_400_000;
const ISO_PATTERN = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})\.(\d{3})Z$/;

/**
 * Memos of the two conversions; both are pure functions, so a hit returns exactly what the full path would. A run
 * parses the same epoch for every tool invocation (`new VirtualClock(epoch)`), and formats times 1 ms apart, which
 * share everything up to the milliseconds (the same idea as `EventLog`'s per-second prefix).
 */
let lastParsed = "1970-01-01T00:00:00.000Z"; // always a valid pair: a non-string never equals it
let lastParsedMs = 0;
let formattedSecondStart = NaN;
let formattedSecondPrefix = "";
/** `"000Z"` … `"999Z"`. */
const MILLIS_Z: readonly string[] = Array.from({ length: 1000 }, (_, i) => String(i).padStart(3, "0") + "Z");

/** Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant, "days_from_civil"). */
function daysFromCivil(year: number, month: number, day: number): number {
  const y = month <= 2 ? year - 1 : year;
  const era = Math.floor(y / 400);
  const yoe = y - era * 400;
  const mp = (month + 9) % 12;
  const doy = Math.floor((153 * mp + 2) / 5) + day - 1;
  const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy;
  return era * 146_097 + doe - 719_468;
}

/** Proleptic Gregorian date of a day count since 1970-01-01 (H. Hinnant, "civil_from_days"). */
function civilFromDays(days: number): [year: number, month: number, day: number] {
  const z = days + 719_468;
  const era = Math.floor(z / 146_097);
  const doe = z - era * 146_097;
  const yoe = Math.floor((doe - Math.floor(doe / 1460) + Math.floor(doe / 36_524) - Math.floor(doe / 146_096)) / 365);
  const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100));
  const mp = Math.floor((5 * doy + 2) / 153);
  const day = doy - Math.floor((153 * mp + 2) / 5) + 1;
  const month = mp < 10 ? mp + 3 : mp - 9;
  const year = yoe + era * 400 + (month <= 2 ? 1 : 0);
  return [year, month, day];
}

function isLeapYear(year: number): boolean {
  return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
}

function daysInMonth(year: number, month: number): number {
  if (month === 2) return isLeapYear(year) ? 29 : 28;
  return month === 4 || month === 6 || month === 9 || month === 11 ? 30 : 31;
}

function pad(n: number, width: number): string {
  return String(n).padStart(width, "0");
}

function typeName(value: unknown): string {
  if (value === null) return "null";
  if (typeof value === "string") return `string of length ${value.length}`;
  return typeof value;
}

/** Check that `value` is an integer time in [MIN_TIME_MS, MAX_TIME_MS]; `name` is the argument's name. */
function assertTime(value: unknown, name: string): asserts value is number {
  if (typeof value !== "number") {
    throw new TypeError(`"${name}" expected integer milliseconds since the Unix epoch, got ${typeName(value)}`);
  }
  if (!Number.isSafeInteger(value)) {
    throw new RangeError(`"${name}" expected integer milliseconds since the Unix epoch, got ${value}`);
  }
  if (value < MIN_TIME_MS || value > MAX_TIME_MS) {
    throw new RangeError(
      `"${name}" must lie between ${MIN_TIME_MS} (0000-01-01T00:00:00.000Z) and ${MAX_TIME_MS} ` +
        `(9999-12-31T23:59:59.999Z), got ${value}`,
    );
  }
}

/**
 * Parse a timestamp in the one accepted form, `YYYY-MM-DDTHH:mm:ss.sssZ` (UTC, exactly three fraction digits,
 * uppercase `T` and `Z`, no offsets, no extended `±YYYYYY` years, no leap second), checking that the date exists.
 * @param text the timestamp, e.g. `"2026-01-01T00:00:00.000Z"`
 * @returns milliseconds since the Unix epoch
 * @throws TypeError when `text` is not a string
 * @throws RangeError when `text` is not in the accepted form or names a date that does not exist
 * @example parseIsoMillis("2000-02-29T00:00:00.000Z") // 951782400000
 */
export function parseIsoMillis(text: string): number {
  if (text === lastParsed) return lastParsedMs;
  if (typeof text !== "string") {
    throw new TypeError(`"text" expected an ISO 8601 UTC timestamp string, got ${typeName(text)}`);
  }
  const m = ISO_PATTERN.exec(text);
  const shown = (): string => (text.length > 40 ? `a string of length ${text.length}` : JSON.stringify(text)); // errors only
  if (m === null) {
    throw new RangeError(
      `"text" expected an ISO 8601 UTC timestamp of the form YYYY-MM-DDTHH:mm:ss.sssZ ` +
        `(e.g. "2026-01-01T00:00:00.000Z"), got ${shown()}`,
    );
  }
  const [year, month, day, hour, minute, second, milli] = m.slice(1).map(Number) as [
    number, number, number, number, number, number, number,
  ];
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) {
    throw new RangeError(`"text" names a date that does not exist: ${shown()}`);
  }
  if (hour > 23 || minute > 59 || second > 59) {
    throw new RangeError(`"text" names a time of day that does not exist (hours 00-23, minutes and seconds 00-59): ${shown()}`);
  }
  const ms = daysFromCivil(year, month, day) * MS_PER_DAY + ((hour * 60 + minute) * 60 + second) * 1000 + milli;
  lastParsed = text;
  lastParsedMs = ms;
  return ms;
}

/**
 * Format milliseconds since the Unix epoch as `YYYY-MM-DDTHH:mm:ss.sssZ` (always four year digits, never the
 * extended `±YYYYYY` form; equal to `new Date(ms).toISOString()` in the accepted range).
 * @param ms integer milliseconds in [MIN_TIME_MS, MAX_TIME_MS] (years 0000–9999)
 * @returns the ISO 8601 UTC timestamp with milliseconds
 * @throws TypeError when `ms` is not a number
 * @throws RangeError when `ms` is not a safe integer or lies outside the years 0000–9999
 * @example formatIsoMillis(951782400000) // "2000-02-29T00:00:00.000Z"
 */
export function formatIsoMillis(ms: number): string {
  if (typeof ms === "number") {
    // A time inside the last formatted second is an integer offset 0–999 from its start, so it is valid and only its
    // "sssZ" differs; a non-integer offset finds no entry in MILLIS_Z and goes through the checks below.
    const offset = ms - formattedSecondStart; // NaN before the first call
    if (offset >= 0 && offset < 1000) {
      const tail = MILLIS_Z[offset];
      if (tail !== undefined) return formattedSecondPrefix + tail;
    }
  }
  assertTime(ms, "ms");
  const days = Math.floor(ms / MS_PER_DAY);
  const inDay = ms - days * MS_PER_DAY;
  const [year, month, day] = civilFromDays(days);
  const hour = Math.floor(inDay / 3_600_000);
  const minute = Math.floor(inDay / 60_000) % 60;
  const second = Math.floor(inDay / 1000) % 60;
  const milli = inDay % 1000;
  const prefix = `${pad(year, 4)}-${pad(month, 2)}-${pad(day, 2)}T${pad(hour, 2)}:${pad(minute, 2)}:${pad(second, 2)}.`;
  formattedSecondStart = ms - milli;
  formattedSecondPrefix = prefix;
  return prefix + MILLIS_Z[milli]!;
}

/**
 * Convert milliseconds since the Unix epoch to nanoseconds, as WASI `clock_time_get` reports them (u64).
 * @param ms a non-negative safe integer number of milliseconds
 * @returns `ms * 1_000_000` as a bigint
 * @throws TypeError when `ms` is not a number
 * @throws RangeError when `ms` is negative (WASI timestamps are unsigned) or not a safe integer
 * @example nanos(1500) // 1500000000n
 */
export function nanos(ms: number): bigint {
  if (typeof ms !== "number") throw new TypeError(`"ms" expected a number of milliseconds, got ${typeName(ms)}`);
  if (!Number.isSafeInteger(ms) || ms < 0) {
    throw new RangeError(
      `"ms" expected a non-negative safe integer (WASI timestamps are unsigned nanoseconds since 1970), got ${ms}`,
    );
  }
  return BigInt(ms) * 1_000_000n;
}

/**
 * A deterministic clock: integer milliseconds since the Unix epoch, starting at a fixed epoch and moving only
 * when told to (`tick`, `read`, `advance`). See the module documentation for the rules.
 * @example
 * const clock = new VirtualClock("2026-01-01T00:00:00.000Z");
 * clock.iso(clock.tick()); // "2026-01-01T00:00:00.000Z"; the clock is now 1 ms later
 */
export class VirtualClock {
  /** The run's start, in ms since the Unix epoch; `offset()` is measured from here. */
  readonly epoch: number;
  #current: number;

  /**
   * Create a clock standing at `epoch`.
   * @param epoch the start: an ISO string `YYYY-MM-DDTHH:mm:ss.sssZ` or integer ms (default 0, 1970-01-01T00:00:00.000Z)
   * @throws TypeError when `epoch` is neither a string nor a number
   * @throws RangeError when `epoch` is not a valid timestamp in the years 0000–9999
   * @example new VirtualClock("2026-01-01T00:00:00.000Z").now() // 1767225600000
   */
  constructor(epoch: string | number = DEFAULT_EPOCH_MS) {
    if (typeof epoch === "string") {
      this.epoch = parseIsoMillis(epoch);
    } else if (typeof epoch === "number") {
      assertTime(epoch, "epoch");
      this.epoch = epoch;
    } else {
      throw new TypeError(`"epoch" expected an ISO 8601 UTC string or integer milliseconds, got ${typeName(epoch)}`);
    }
    this.#current = this.epoch;
  }

  /**
   * The current time, without moving the clock.
   * @returns milliseconds since the Unix epoch
   * @example new VirtualClock().now() // 0
   */
  now(): number {
    return this.#current;
  }

  /**
   * Move the clock forward.
   * @param ms a non-negative safe integer number of milliseconds
   * @returns nothing
   * @throws TypeError when `ms` is not a number
   * @throws RangeError when `ms` is negative or not a safe integer, or the clock would pass 9999-12-31T23:59:59.999Z
   * @example clock.advance(1000)
   */
  advance(ms: number): void {
    if (typeof ms !== "number") throw new TypeError(`"ms" expected a number of milliseconds, got ${typeName(ms)}`);
    if (!Number.isSafeInteger(ms) || ms < 0) {
      throw new RangeError(`"ms" expected a non-negative safe integer (the clock never goes back), got ${ms}`);
    }
    this.#moveTo(this.#current + ms);
  }

  /**
   * Stamp an event: return the current time, then move the clock on by `EVENT_STEP_MS`.
   * @returns the event's timestamp in ms since the Unix epoch
   * @throws RangeError when the clock would pass 9999-12-31T23:59:59.999Z (the clock is left unchanged)
   * @example const t = clock.tick(); clock.now() === t + 1 // true
   */
  tick(): number {
    const t = this.#current;
    this.#moveTo(t + EVENT_STEP_MS);
    return t;
  }

  /**
   * Answer a tool's clock read: return the current time, then move the clock on by `READ_STEP_MS`.
   * @returns the time the tool sees, in ms since the Unix epoch
   * @throws RangeError when the clock would pass 9999-12-31T23:59:59.999Z (the clock is left unchanged)
   * @example const t = clock.read(); clock.now() === t + 1 // true
   */
  read(): number {
    const t = this.#current;
    this.#moveTo(t + READ_STEP_MS);
    return t;
  }

  /**
   * Format a time (default: the current time, without moving the clock) as `YYYY-MM-DDTHH:mm:ss.sssZ`.
   * @param ms integer ms since the Unix epoch; defaults to `now()`
   * @returns the ISO 8601 UTC timestamp with milliseconds
   * @throws TypeError | RangeError as `formatIsoMillis`
   * @example new VirtualClock().iso() // "1970-01-01T00:00:00.000Z"
   */
  iso(ms: number = this.#current): string {
    return formatIsoMillis(ms);
  }

  /**
   * Milliseconds from the run's start (the epoch) to `ms`, as capsules record timestamps (seed 003 §8.2
   * "Timestamps recorded as offsets from run start").
   * @param ms integer ms since the Unix epoch; defaults to `now()`
   * @returns `ms - epoch` (negative when `ms` is before the epoch)
   * @throws TypeError when `ms` is not a number
   * @throws RangeError when `ms` is not a safe integer in the years 0000–9999
   * @example new VirtualClock(1000).offset(1500) // 500
   */
  offset(ms: number = this.#current): number {
    assertTime(ms, "ms");
    return ms - this.epoch;
  }

  /**
   * An independent clock for one tool invocation: same epoch and steps, standing at `startMs`; moving
   * either clock does not move the other.
   * @param startMs where the new clock stands, at or after the epoch; defaults to `now()`
   * @returns a new `VirtualClock`
   * @throws TypeError when `startMs` is not a number
   * @throws RangeError when `startMs` is before the epoch or outside the years 0000–9999
   * @example const toolClock = clock.fork(clock.now());
   */
  fork(startMs: number = this.#current): VirtualClock {
    assertTime(startMs, "startMs");
    if (startMs < this.epoch) {
      throw new RangeError(`"startMs" must not be before the clock's epoch ${this.epoch}, got ${startMs}`);
    }
    const child = new VirtualClock(this.epoch);
    child.#current = startMs;
    return child;
  }

  #moveTo(next: number): void {
    if (next > MAX_TIME_MS) {
      throw new RangeError(`the virtual clock cannot pass 9999-12-31T23:59:59.999Z; choose an earlier epoch`);
    }
    this.#current = next;
  }
}
