/**
 * The bounded log of a tool invocation (`log` host op). Entries past the limits are counted, not kept, so a tool
 * cannot exhaust the host's memory through logging; the cut is deterministic (it depends only on the entries).
 * @module
 */

/** Log levels of the `log` op. */
export type LogLevel = "debug" | "info" | "warn" | "error";
/** One kept entry. */
export type LogEntry = { level: LogLevel; message: string };

/** Default most entries kept. */
export const DEFAULT_MAX_LOG_ENTRIES = 10_000;
/** Default most message characters kept in total: 1 MiB. */
export const DEFAULT_MAX_LOG_CHARS = 1024 * 1024;

/**
 * A bounded list of log entries.
 * @example const log = new LogSink(); log.append("info", "hi"); log.text() // "info: hi\n"
 */
export class LogSink {
  readonly #entries: LogEntry[] = [];
  #chars = 0;
  #dropped = 0;
  readonly #maxEntries: number;
  readonly #maxChars: number;

  /**
   * @param options limits
   * @throws RangeError when a limit is not a positive safe integer
   */
  constructor(options?: { maxEntries?: number; maxChars?: number }) {
    if (options === undefined) {
      // Every invocation makes a log with the defaults: skip the option checks.
      this.#maxEntries = DEFAULT_MAX_LOG_ENTRIES;
      this.#maxChars = DEFAULT_MAX_LOG_CHARS;
      return;
    }
    for (const [k, v] of Object.entries(options)) {
      if (v !== undefined && (!Number.isSafeInteger(v) || v <= 0)) throw new RangeError(`"${k}" expected a positive safe integer, got ${v}`);
    }
    this.#maxEntries = options.maxEntries ?? DEFAULT_MAX_LOG_ENTRIES;
    this.#maxChars = options.maxChars ?? DEFAULT_MAX_LOG_CHARS;
  }

  /**
   * Keep an entry, or count it as dropped when a limit is reached.
   * @param level the level
   * @param message the text
   * @returns whether it was kept
   */
  append(level: LogLevel, message: string): boolean {
    if (this.#entries.length >= this.#maxEntries || this.#chars + message.length > this.#maxChars) {
      this.#dropped++;
      return false;
    }
    this.#entries.push({ level, message });
    this.#chars += message.length;
    return true;
  }

  /** Kept entries, in order. */
  get entries(): readonly LogEntry[] {
    return this.#entries;
  }

  /** Entries dropped over the limits. */
  get dropped(): number {
    return this.#dropped;
  }

  /**
   * The log as text: `level: message` lines, and a last line counting dropped entries, if any.
   * @returns the text
   */
  text(): string {
    let out = "";
    for (const e of this.#entries) out += `${e.level}: ${e.message}\n`;
    if (this.#dropped > 0) out += `(${this.#dropped} log entries dropped over the log limit)\n`;
    return out;
  }
}
