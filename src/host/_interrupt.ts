/**
 * The shared interrupt word's values: what stopped a run, as a number a fuel meter on any thread can read.
 * @module
 */

/** The abort reasons the interrupt word can carry (index = the word's value; 0 = not interrupted). */
export const INTERRUPT_REASONS = ["", "SIGINT", "SIGTERM", "abort"] as const;

/**
 * The word's value for an abort reason.
 * @param reason the abort signal's reason
 * @returns 1..3 (anything unknown is 3, "abort")
 * @example interruptCode("SIGTERM") // 2
 */
export function interruptCode(reason: unknown): number {
  const i = INTERRUPT_REASONS.indexOf(String(reason) as (typeof INTERRUPT_REASONS)[number]);
  return i > 0 ? i : 3;
}
