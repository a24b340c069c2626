/**
 * What a run submission asks for, in canonical form, and its digest: what decides whether a repeated `requestId`
 * names the same request (200, the first run) or a different one (409). The parts are those that define the run —
 * the pack digest, the input as canonical JSON (key order and number spelling do not matter; absent is `{}`, as the
 * run takes it), the seed as its decimal text (`7` and `"7"` are one seed; absent is its own, derived from the input),
 * `approve` (absent is false), the step limits, and the NAMES of the secrets sent. A secret's value is never part of
 * it: the digest is stored with the run, and values never reach a table (`secret-vault.ts`).
 * @module
 */
import { canonicalize, sha256Hex } from "../canonical/mod.ts";
import type { RunOptions } from "./schemas.ts";

/** The parts of a request that define its run, each in canonical form. */
export type RequestParts = {
  pack: string;
  /** The input's canonical JSON text (RFC 8785). */
  input: string;
  seed: string | null;
  approve: boolean;
  maxSteps: number | null;
  stepTimeoutMs: number | null;
  /** The secrets' names, sorted (never their values); undefined when unknown (a stored request does not hold them). */
  secrets?: readonly string[];
};

/** Names of the parts, as a 409 names what differs. */
const PART_NAMES = ["pack", "input", "seed", "approve", "maxSteps", "stepTimeoutMs", "secrets"] as const;

/**
 * The canonical parts of a request.
 * @param pack the pack digest
 * @param options the run options (the requestId is not a part)
 * @param secretNames the names of the secrets sent with it, if known
 * @returns the parts
 * @example requestParts("ab…", { input: { b: 1.0, a: 2 } }, []).input // '{"a":2,"b":1}'
 */
export function requestParts(pack: string, options: Omit<RunOptions, "requestId">, secretNames?: readonly string[]): RequestParts {
  return {
    pack,
    input: canonicalize(options.input ?? {}),
    seed: options.seed === undefined ? null : String(options.seed),
    approve: options.approve === true,
    maxSteps: options.maxSteps ?? null,
    stepTimeoutMs: options.stepTimeoutMs ?? null,
    ...(secretNames === undefined ? {} : { secrets: [...new Set(secretNames)].sort() }),
  };
}

/**
 * The digest of a request: SHA-256 (hex) of the canonical JSON of its parts, secrets' names included.
 * @param parts the parts ({@link requestParts}, with the secrets' names)
 * @returns 64 lowercase hex digits
 * @example const digest = requestDigest(requestParts(pack.digest, options, Object.keys(secrets)));
 */
export function requestDigest(parts: RequestParts): string {
  return sha256Hex(canonicalize({ v: "reach-wasm/run-request/1", ...parts, secrets: parts.secrets ?? [] }));
}

/**
 * The parts of a stored run's request (its pack digest and its `request` column, the JSON text of its options).
 * @param pack the stored pack digest
 * @param requestText the stored request
 * @returns the parts, without the secrets' names (never stored)
 * @example const stored = storedRequestParts(row.pack_digest, row.request);
 */
export function storedRequestParts(pack: string, requestText: unknown): RequestParts {
  const options = (typeof requestText === "string" ? JSON.parse(requestText) : requestText) as Omit<RunOptions, "requestId">;
  return requestParts(pack, options ?? {});
}

/**
 * Which parts of two requests of different digests differ, for a message. The secrets' names are compared only when
 * both sides know them; when no other part differs, they are what does (the digests differ).
 * @param a one request's parts
 * @param b the other's
 * @returns the names of the differing parts (at least one)
 * @example differingParts(requestParts(d, { seed: 1 }), requestParts(d, { seed: 2 })) // ["seed"]
 */
export function differingParts(a: RequestParts, b: RequestParts): string[] {
  const differs = PART_NAMES.filter((k) => (k !== "secrets" || (a.secrets !== undefined && b.secrets !== undefined)) && canonicalize(a[k] ?? null) !== canonicalize(b[k] ?? null));
  return differs.length > 0 ? differs : ["secrets"];
}
