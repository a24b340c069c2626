/**
 * The tape recorder and player (seed 003 §3.4).
 * @module
 */
export {
  BLOB_THRESHOLD,
  DEFAULT_MAX_BLOB_BYTES,
  DEFAULT_MAX_RECORDS,
  MAX_INLINE_REFUSED_BYTES,
  TapeRecorder,
  storedRequest,
  stripBlobs,
  tapeToJsonl,
} from "./tape.ts";
export type { TapeJson, TapeOutcome, TapeRecord, TapeRecorderOptions } from "./tape.ts";
export { TapePlayer, errorFromDetails, firstDifference, replayDivergence } from "./player.ts";
export type { PlayedCall } from "./player.ts";
export { readTapeJsonl } from "./tape-jsonl.ts";
export { differencePointer, showValue } from "./player.ts";
export { committedTape, committedTapeJsonl, isCommittedTape, TAPE_VALUE_PREFIX, tapeValuePath } from "./tape-commits.ts";
