/**
 * Per-client limits of the run service's HTTP API, on top of the HTTP server's own (requests in progress per client,
 * `serveHttp`): how many long-lived watches (event streams, long polls) one client may hold at once, and how long an
 * event stream may stay without an event before it ends (the client resumes with `Last-Event-ID`). A client is its
 * address (an IPv6 client its /64), as the server hands it in; no limit is shared between clients, so no number of
 * idle clients keeps another out.
 * @module
 */
import type { Context } from "hono";
import type { ClientInfo } from "./ports.ts";
import { ReachError } from "../protocol/mod.ts";
import { HttpRefusal } from "./http-errors.ts";

/** Event streams and long polls one client may hold at once, by default. */
export const DEFAULT_MAX_WATCHERS_PER_CLIENT = 256;

/** An event stream without any event for this long ends, by default (10 minutes; heartbeats do not count). */
export const DEFAULT_STREAM_IDLE_MS = 10 * 60_000;

/** The limits a service applies (see {@link DEFAULT_MAX_WATCHERS_PER_CLIENT}, {@link DEFAULT_STREAM_IDLE_MS}). */
export type WatchLimits = {
  watchersPerClient: number;
  streamIdleMs: number;
  /** The clock idleness is measured on, in ms (the real one; never recorded). */
  now: () => number;
};

/** The API's Hono environment: the tenant of the request, and the client the server handed in. */
export type ApiEnv = { Variables: { tenant: string }; Bindings: { client?: ClientInfo } | undefined };

/** Slots counted per client. */
export class ClientSlots {
  readonly #max: number;
  readonly #held = new Map<string, number>();

  /** @param max slots per client */
  constructor(max: number) {
    this.#max = max;
  }

  /**
   * Take one of a client's slots.
   * @param key the client
   * @returns the function that gives it back (idempotent), or null when the client holds all of its slots
   */
  take(key: string): (() => void) | null {
    const n = this.#held.get(key) ?? 0;
    if (n >= this.#max) return null;
    this.#held.set(key, n + 1);
    let given = false;
    return () => {
      if (given) return;
      given = true;
      const left = (this.#held.get(key) ?? 1) - 1;
      if (left <= 0) this.#held.delete(key);
      else this.#held.set(key, left);
    };
  }
}

/**
 * Take a watch slot for the request's client, or refuse with 429.
 * @param c the Hono context (its `env.client`, absent in-process: one local client)
 * @param slots the service's slots
 * @param max the per-client limit, for the message
 * @returns the release function
 * @throws HttpRefusal 429 `POLICY_RATE_LIMIT_EXCEEDED` (with Retry-After) when the client holds all of its slots
 * @example const release = takeWatch(c, slots, 256); try { … } finally { release(); }
 */
export function takeWatch(c: Context<ApiEnv>, slots: ClientSlots, max: number): () => void {
  const key = c.env?.client?.key ?? "local";
  const release = slots.take(key);
  if (release === null) {
    const message = `this client already holds ${max} event streams and long polls (?wait=) at once; close one and retry`;
    throw new HttpRefusal(429, new ReachError("POLICY_RATE_LIMIT_EXCEEDED", message, { details: { maxWatchers: max }, retryAfter: 1000 }));
  }
  return release;
}
