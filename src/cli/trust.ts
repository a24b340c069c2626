/**
 * The trust store the CLI uses: `--trust FILE`, else the default path (src/platform/config.ts). A missing default
 * file means "no key is trusted"; a missing `--trust` file or a malformed store is an error.
 * @module
 */
import { defaultTrustStorePath, readTextIfExists } from "../platform/config.ts";
import { ReachError } from "../protocol/errors.ts";
import { parseTrustStore } from "../trust/trust-store.ts";
import type { TrustStore } from "../trust/trust-store.ts";

/**
 * Load the trust store.
 * @param explicit the `--trust` path, if given
 * @returns the store, or null when there is none
 */
export async function loadTrustStore(explicit?: string): Promise<TrustStore | null> {
  const path = explicit ?? defaultTrustStorePath();
  const text = await readTextIfExists(path);
  if (text === null) {
    if (explicit !== undefined) throw new ReachError("PROTO_INVALID_ARGUMENT", `the trust store ${JSON.stringify(path)} does not exist`);
    return null;
  }
  try {
    return parseTrustStore(text);
  } catch (err) {
    if (err instanceof ReachError) throw new ReachError(err.code, `trust store ${path}: ${err.message}`, { details: err.details });
    throw err;
  }
}
