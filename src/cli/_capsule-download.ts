/**
 * Naming a capsule fetched from a run service (`submit --wait --out DIR`, `runs capsule ID --out DIR`): the name is
 * built from the run hash the server sends, checked first, never from its `Content-Disposition`.
 * @module
 */
import { join } from "node:path";
import { ReachError } from "../protocol/mod.ts";

/**
 * Where a capsule fetched from a service is saved in `dir`: `<runHash>.capsule.tar.gz`. The run hash comes from the
 * server (`X-Reach-Run-Hash`; its `Content-Disposition` is never used), so it must be 64 lowercase hex digits
 * before it becomes part of a path or a printed line.
 * @param dir the `--out` folder
 * @param runHash the run hash the server sent
 * @returns the file's path inside `dir`
 * @throws ReachError `PROTO_INVALID_ARGUMENT` for anything else (nothing is written)
 * @example capsulePathIn("out", "ab".repeat(32)) // "out/abab….capsule.tar.gz"
 */
export function capsulePathIn(dir: string, runHash: string): string {
  checkRunHash(runHash);
  return join(dir, `${runHash}.capsule.tar.gz`);
}

/**
 * Refuse a run hash from a server that is not 64 lowercase hex digits.
 * @param runHash what the server sent
 * @throws ReachError `PROTO_INVALID_ARGUMENT` (nothing is written)
 */
export function checkRunHash(runHash: string): void {
  if (!/^[0-9a-f]{64}$/.test(runHash)) {
    throw new ReachError("PROTO_INVALID_ARGUMENT", `the server sent the capsule's run hash as ${JSON.stringify(runHash.slice(0, 200))}, which is not 64 lowercase hex digits; nothing was written — is --server a reach-wasm service?`);
  }
}
