/**
 * JSONL form of a run's events (`events.jsonl`): one RFC 8785 canonical JSON object per line, each line ending in
 * `\n`, UTF-8, no blank lines. Reading is strict: a line that is not valid UTF-8, not JSON, or not in canonical form
 * is reported with its index, so a single changed byte is always located.
 * @module
 */
import { canonicalize } from "../canonical/mod.ts";
import { utf8 } from "../canonical/mod.ts";
import type { RecordedEvent } from "./event-log.ts";
import type { ChainReport } from "./verify.ts";
import { verifyChain } from "./verify.ts";

/**
 * Serialise events as JSONL text.
 * @param events recorded events
 * @returns the text (each line canonical JSON + "\n")
 * @example toJsonl(log.events)
 */
export function toJsonl(events: readonly RecordedEvent[]): string {
  let out = "";
  for (const e of events) out += canonicalize(e) + "\n";
  return out;
}

/**
 * Serialise events as UTF-8 JSONL bytes.
 * @param events recorded events
 * @returns UTF-8 bytes of `toJsonl(events)`
 */
export function toJsonlBytes(events: readonly RecordedEvent[]): Uint8Array {
  return utf8(toJsonl(events));
}

/** Result of reading JSONL: the parsed lines, and the first bad line if any. */
export type JsonlRead = { events: unknown[]; error?: { index: number; reason: string } };

const decoder = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

/**
 * Parse JSONL bytes or text strictly; stops at the first bad line.
 * @param input UTF-8 bytes or text
 * @param maxLines refuse inputs with more lines than this (default 1,000,000)
 * @returns the events parsed before the first bad line, and that line's index and reason
 * @example const { events, error } = readJsonl(bytes);
 */
export function readJsonl(input: Uint8Array | string, maxLines = 1_000_000): JsonlRead {
  const bytes = typeof input === "string" ? utf8(input) : input;
  const events: unknown[] = [];
  let start = 0;
  let index = 0;
  while (start < bytes.length) {
    if (index >= maxLines) return { events, error: { index, reason: `more than ${maxLines} lines` } };
    const nl = bytes.indexOf(0x0a, start);
    if (nl === -1) return { events, error: { index, reason: "the last line does not end with a newline (truncated?)" } };
    let line: string;
    try {
      line = decoder.decode(bytes.subarray(start, nl));
    } catch {
      return { events, error: { index, reason: "the line is not valid UTF-8" } };
    }
    if (line.length === 0) return { events, error: { index, reason: "blank line" } };
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch {
      return { events, error: { index, reason: "the line is not valid JSON" } };
    }
    let canonical: string;
    try {
      canonical = canonicalize(value);
    } catch (err) {
      return { events, error: { index, reason: `the line cannot be canonicalised: ${(err as Error).message}` } };
    }
    if (canonical !== line) return { events, error: { index, reason: "the line is not in RFC 8785 canonical form" } };
    events.push(value);
    start = nl + 1;
    index++;
  }
  return { events };
}

/**
 * Read and verify `events.jsonl` in one go: the first bad line or broken event is reported by index.
 * @param input UTF-8 bytes or text of events.jsonl
 * @param expectedRunHash optional runHash the chain must produce
 * @returns a ChainReport
 */
export function verifyJsonl(input: Uint8Array | string, expectedRunHash?: string): ChainReport {
  const { events, error } = readJsonl(input);
  if (error) return { valid: false, count: events.length, index: error.index, field: "", reason: error.reason };
  return verifyChain(events, expectedRunHash);
}
