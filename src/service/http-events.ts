/**
 * Watching a run over HTTP: its events as Server-Sent Events (every stored event from the first, or after
 * `Last-Event-ID`, then live until the run ends), and a long poll for its record (`GET /runs/:id?wait=S`).
 * @module
 */
import type { Context } from "hono";
import { streamSSE } from "hono/streaming";
import type { ServiceContext } from "./context.ts";
import { refuse } from "./http-errors.ts";
import type { RunRecord } from "./schemas.ts";
import { TERMINAL_STATUSES } from "./schemas.ts";
import { isStoreUnavailable } from "./store-errors.ts";
import { getRun, readEvents } from "./store-runs.ts";

const PAGE = 500;
/** A `heartbeat` event after this long without any other (keeps proxies from closing the stream). */
const HEARTBEAT_MS = 15_000;

function ended(status: string): boolean {
  return (TERMINAL_STATUSES as readonly string[]).includes(status);
}

function noRun(runId: string) {
  return refuse(404, "PROTO_INVALID_ARGUMENT", `there is no run ${runId} for this tenant; list your runs with GET /runs (reach-wasm runs list)`, { runId });
}

/**
 * The record of a tenant's run, waiting up to `waitSeconds` for it to end.
 * @param ctx the service
 * @param tenant the tenant asking
 * @param runId the run
 * @param waitSeconds 0: answer at once
 * @returns the record (ended, or as it is when the wait is over)
 * @throws HttpRefusal 404 when the tenant has no such run
 * @example const record = await awaitRecord(ctx, tenant, id, 30);
 */
export async function awaitRecord(ctx: ServiceContext, tenant: string, runId: string, waitSeconds: number): Promise<RunRecord> {
  const deadline = performance.now() + waitSeconds * 1000;
  // After a NOTIFY (most often the run's end) the full record is read at once: one statement fewer per waited run
  // than looking at the status again first.
  let woken = false;
  for (;;) {
    const left = deadline - performance.now();
    const wait = left > 0 && !ctx.hub.closed ? ctx.hub.wait(runId, Math.min(left, 2000)) : null;
    if (wait === null || woken) {
      const record = await getRun(ctx.db, tenant, runId);
      if (wait === null || record === null || ended(record.status)) {
        wait?.cancel();
        if (record === null) throw noRun(runId);
        return record;
      }
    } else {
      // while it runs, a one-column look is enough
      const rows = await ctx.db.query<{ status: string }>("SELECT status FROM reach_wasm.runs WHERE id = $1 AND tenant = $2", [runId, tenant]);
      if (rows[0] === undefined || ended(rows[0].status)) {
        wait.cancel();
        const record = await getRun(ctx.db, tenant, runId);
        if (record === null) throw noRun(runId);
        return record;
      }
    }
    woken = await wait.changed;
  }
}

/** How a stream is watched: the slot to give back when it ends, and when it ends for being idle. */
export type StreamWatch = {
  /** Called once when the stream has ended. */
  release: () => void;
  /** The stream ends after this long without an event (heartbeats do not count); the client resumes with Last-Event-ID. */
  idleMs: number;
  /** The clock, in ms. */
  now: () => number;
};

/**
 * Stream a tenant's run's events as Server-Sent Events: `id:` the event's sequence number, `event:` its type,
 * `data:` the event (seed 004 RunEvent). The stream ends after the run's last event, or after `watch.idleMs` without
 * one (the client then resumes with `Last-Event-ID`, or waits with `GET /runs/:id?wait=`).
 * @param c the Hono context
 * @param ctx the service
 * @param tenant the tenant asking
 * @param runId the run
 * @param watch the slot and idle limit (default: none)
 * @returns the streaming response
 * @throws HttpRefusal 404 when the tenant has no such run; 400 for a bad Last-Event-ID
 * @example app.get("/runs/:id/events", (c) => streamEvents(c, ctx, c.get("tenant"), c.req.param("id")));
 */
export async function streamEvents(c: Context, ctx: ServiceContext, tenant: string, runId: string, watch?: StreamWatch): Promise<Response> {
  if ((await getRun(ctx.db, tenant, runId)) === null) throw noRun(runId);
  const last = c.req.header("last-event-id") ?? c.req.query("after") ?? null;
  if (last !== null && !/^(-1|0|[1-9][0-9]{0,8})$/.test(last)) throw refuse(400, "PROTO_INVALID_ARGUMENT", `Last-Event-ID (or ?after=) must be an event sequence number, got ${JSON.stringify(last)}`);
  const after = last === null ? -1 : Number(last);
  const now = watch?.now ?? (() => performance.now());
  return streamSSE(c, async (stream) => {
    try {
      await pump(stream, ctx, runId, after, watch === undefined ? Infinity : watch.idleMs, now);
    } finally {
      watch?.release();
    }
  }, async (err) => ctx.log(`the event stream of run ${runId} failed: ${err.message}`)); // a line, not a stack on stderr
}

type SSEStream = Parameters<Parameters<typeof streamSSE>[1]>[0];

/** Write the run's events from `after` until it ends, the client goes, or no event came for `idleMs`. */
async function pump(stream: SSEStream, ctx: ServiceContext, runId: string, from: number, idleMs: number, now: () => number): Promise<void> {
  let after = from;
  let closed = false;
  stream.onAbort(() => void (closed = true));
  let quiet = 0;
  let lastEvent = now();
  while (!closed && !ctx.hub.closed) {
    const wait = ctx.hub.wait(runId, 1000);
    let rows: { status: string }[];
    let events: Awaited<ReturnType<typeof readEvents>>;
    try {
      rows = await ctx.db.query<{ status: string }>("SELECT status FROM reach_wasm.runs WHERE id = $1", [runId]);
      events = await readEvents(ctx.db, runId, after, PAGE);
    } catch (err) {
      if (!isStoreUnavailable(err)) throw err;
      wait.cancel();
      break; // the database is away: the stream ends as when idle, and the client resumes with Last-Event-ID
    }
    const done = rows[0] === undefined || ended(rows[0].status);
    for (const e of events) {
      await stream.writeSSE({ id: String(e.sequence), event: e.eventType, data: JSON.stringify(e) });
      after = e.sequence;
    }
    if (events.length > 0) lastEvent = now();
    else if (now() - lastEvent >= idleMs) {
      wait.cancel();
      break; // idle: the client resumes with Last-Event-ID
    }
    if (events.length === PAGE) {
      wait.cancel();
      continue;
    }
    if (done) {
      wait.cancel();
      break;
    }
    const changed = await wait.changed;
    quiet = changed || events.length > 0 ? 0 : quiet + 1000;
    if (quiet >= HEARTBEAT_MS) {
      quiet = 0;
      await stream.writeSSE({ event: "heartbeat", data: JSON.stringify({ runId, eventType: "heartbeat" }) });
    }
  }
}
