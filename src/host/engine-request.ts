/**
 * Turning what crosses to an engine thread back into an engine request (used by the worker, and by the calls that
 * run on the calling thread, `engine-inline.ts`).
 * @module
 */
import type { EngineRunRequest } from "../engine/mod.ts";
import type { RunProgress } from "../engine/mod.ts";
import { parsePrivateKeyFile } from "../trust/mod.ts";
import { parseTrustStore } from "../trust/mod.ts";
import { INTERRUPT_REASONS } from "./_interrupt.ts";
import type { WireRequest } from "./engine-wire.ts";

/**
 * The engine request a wire request stands for: the trust store and key parsed, the interrupt word read at every
 * fuel refill (and turned into an abort of the run's signal, with the word's reason), the runtime's fetch. The wall
 * clock is the environment's (`EngineEnvironment.clock`).
 * @param request what crossed
 * @param interrupt the shared interrupt word
 * @param controller aborts the run's signal (also on an abort message)
 * @param onProgress where progress goes
 * @returns the engine request
 * @example const req = engineRequest(wire, sab, new AbortController(), () => {});
 */
export function engineRequest(request: WireRequest, interrupt: SharedArrayBuffer, controller: AbortController, onProgress: (p: RunProgress) => void): EngineRunRequest {
  const word = new Int32Array(interrupt);
  const { trust, network, keyFileText, ...rest } = request;
  return {
    ...rest,
    ...(keyFileText === undefined ? {} : { key: parsePrivateKeyFile(keyFileText).privateKey }),
    trust: { store: trust?.storeText === undefined || trust.storeText === null ? null : parseTrustStore(trust.storeText), unrestricted: trust?.unrestricted === true },
    signal: controller.signal,
    // The word is seen before the abort message arrives: abort the run's signal here, with the word's reason.
    interrupted: () => {
      const v = Atomics.load(word, 0);
      if (v !== 0 && !controller.signal.aborted) controller.abort(INTERRUPT_REASONS[v] ?? "abort");
      return v !== 0;
    },
    onProgress,
    ...(network === true ? { fetch: (url: string | URL | Request, init?: RequestInit) => fetch(url, init) } : {}),
  };
}
