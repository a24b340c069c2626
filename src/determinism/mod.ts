/**
 * Determinism: the virtual clock and the seeded random streams of a run (seed 003 §3.3; ARCHITECTURE.md
 * "Determinism"; conformance/DETERMINISM.md). Everything time- or randomness-related on a hashed path goes
 * through here.
 * @module
 */
export {
  DEFAULT_EPOCH_MS,
  EVENT_STEP_MS,
  formatIsoMillis,
  MAX_TIME_MS,
  MIN_TIME_MS,
  nanos,
  parseIsoMillis,
  READ_STEP_MS,
  VirtualClock,
} from "./clock.ts";
export {
  deriveStream,
  MAX_BYTES_PER_CALL,
  MAX_SEED,
  parseSeed,
  PRNG_DOMAIN,
  RandomStream,
  streamKey,
} from "./prng.ts";
export { epochMs, monotonicMs } from "./real-clock.ts";
export type { RealClock } from "./real-clock.ts";
