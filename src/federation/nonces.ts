/**
 * Seen nonces (replay protection of federation messages): a nonce is remembered for as long as a message carrying it
 * could still pass the ±120 s clock window, so the book stays small. Serialisable, so a node keeps it across restarts.
 * @module
 */
import { z } from "zod";
import { CLOCK_WINDOW_MS } from "./chain.ts";

/** The stored form (`nonces.json`). */
export const NonceFileSchema = z.strictObject({
  version: z.literal(1),
  seen: z.array(z.strictObject({ from: z.string().max(64), nonce: z.string().max(64), until: z.number().int().nonnegative() })).max(1_000_000),
});
/** The stored form. */
export type NonceFile = z.output<typeof NonceFileSchema>;

/** Remembered nonces. */
export class NonceBook {
  readonly #until = new Map<string, number>();
  readonly #now: () => number;

  /**
   * @param now the clock (ms since the epoch)
   * @param stored a previously saved book
   */
  constructor(now: () => number, stored?: NonceFile) {
    this.#now = now;
    for (const s of stored?.seen ?? []) this.#until.set(`${s.from}/${s.nonce}`, s.until);
  }

  /**
   * Record a nonce unless it was seen.
   * @param from the sender
   * @param nonce the nonce
   * @param timestampMs the message's timestamp
   * @returns true when new (recorded), false for a replay
   * @throws never
   * @example book.record(nodeId, msg.nonce, Date.parse(msg.timestamp)) // true, then false
   */
  record(from: string, nonce: string, timestampMs: number): boolean {
    this.prune();
    const key = `${from}/${nonce}`;
    if (this.#until.has(key)) return false;
    this.#until.set(key, Math.max(timestampMs, this.#now()) + CLOCK_WINDOW_MS);
    return true;
  }

  /**
   * Forget nonces whose messages can no longer pass the clock window.
   * @returns nothing
   * @throws never
   * @example book.prune()
   */
  prune(): void {
    const now = this.#now();
    for (const [k, until] of this.#until) if (until < now) this.#until.delete(k);
  }

  /**
   * The stored form.
   * @returns the JSON document of `nonces.json`
   * @throws never
   * @example JSON.stringify(book.toJSON())
   */
  toJSON(): NonceFile {
    this.prune();
    return { version: 1, seen: [...this.#until].map(([k, until]) => ({ from: k.slice(0, k.indexOf("/")), nonce: k.slice(k.indexOf("/") + 1), until })) };
  }
}
