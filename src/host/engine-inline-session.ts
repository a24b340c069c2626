/**
 * A session run on the calling thread first (`reach-wasm mcp`): each call executes here while that is harmless, and
 * the session moves to an engine thread the moment it is not, as a run does (`src/engine/inline-first.ts`).
 *
 * An MCP call is short, and an engine thread costs every call a hop between threads (a quarter of a short call's
 * round trip). But a call whose tool computes holds this thread, and with it the server: its signal handlers, its
 * other requests. So a call is given up once it has held the thread longer than the budget (seen at a fuel refill;
 * with the process's CPU time, so that a loaded machine does not move sessions), or when a tool asks for the network
 * (no request is sent twice). The session then opens on an engine thread, the calls it already answered are made
 * there again in the same order, and the call that was given up runs there; every later call goes there too. A
 * session is a pure function of its calls (virtual time, seeded randomness, no network before that point), so the
 * thread's session records exactly what this one would have, and its answers are the ones the client already has.
 * The session given up is dropped, never closed into a capsule. A signal reaches the thread's session only once the
 * earlier calls are made again there, so its capsule never ends before a call the client saw answered.
 * @module
 */
import type { JsonValue } from "../protocol/mod.ts";
import type { SessionCall } from "../engine/mod.ts";
import type { EngineSession } from "../engine/mod.ts";
import type { Hold, holdWatch } from "../engine/mod.ts";
import type { IsolatedSession, WireRequest } from "./engine-wire.ts";
import { mayReachNetwork } from "./engine-inline.ts";
import { loopTurn } from "../platform/loop-turn.ts";
import { processClock, processCpuClock } from "../platform/real-clock.ts";
import { signalAt } from "../platform/signal-hook.ts";

/** Why a call was given up (the inline session's abort reason; never recorded: that session is dropped). */
const PROMOTED = "moved to an engine thread";

/** The session on the calling thread and what gives its calls up (module notes). */
type Inline = {
  readonly session: EngineSession;
  readonly watch: ReturnType<typeof holdWatch>;
  readonly turn: (last?: boolean) => Promise<void>;
  /** Passes the caller's signal on to the session here (removed once the session moves or closes). */
  readonly forward: () => void;
  /** The hold of the call under way here, if any. */
  hold: Hold | null;
  /** Whether a call was given up: from then on every call runs on the thread. */
  promoted: boolean;
};

/**
 * Open the session on the calling thread; a call is given up when it holds the thread past `budgetMs` or asks for
 * the network.
 */
async function openInline(request: WireRequest, options: { signal?: AbortSignal }, budgetMs: number): Promise<Inline> {
  const [{ openSession }, { engineRequest }, { defaultEnvironment }, { holdWatch }] = await Promise.all([import("../engine/engine.ts"), import("./engine-request.ts"), import("./environment.ts"), import("../engine/inline-first.ts")]);
  const cpuMs = processCpuClock();
  const turn = loopTurn();
  const watch = holdWatch({ ms: budgetMs, turn, now: processClock.monotonicMs, ...(cpuMs === undefined ? {} : { cpuMs }) });
  const here = new AbortController();
  const forward = (): void => void (here.signal.aborted || here.abort(options.signal?.reason ?? "abort"));
  if (options.signal?.aborted === true) forward();
  else options.signal?.addEventListener("abort", forward, { once: true });
  const state = { hold: null as Hold | null, promoted: false };
  const promote = (): true => {
    state.promoted = true;
    if (!here.signal.aborted) here.abort(PROMOTED);
    return true;
  };
  const { interrupted: _word, signal: _own, fetch, ...engine } = engineRequest(request, new SharedArrayBuffer(8), new AbortController(), () => {});
  const session = await openSession(defaultEnvironment(), {
    ...engine,
    parallel: 1,
    signal: here.signal,
    turn: (last) => watch.turn(last), // the engine's turns for a signal are no break of a call's hold
    interrupted: () => state.promoted || (state.hold !== null && !here.signal.aborted && watch.over(state.hold) && promote()),
    ...(fetch === undefined ? {} : { fetch: () => (promote(), Promise.reject(new Error(PROMOTED))) }),
  }).catch((err: unknown) => {
    options.signal?.removeEventListener("abort", forward);
    throw err;
  });
  return Object.assign(state, { session, watch, turn, forward });
}

/**
 * Open a session that runs on the calling thread while that is harmless (module notes).
 * @param request what would cross to the thread
 * @param options the abort signal (it ends the session ABORTED)
 * @param budgetMs how long a call may hold the thread without a break, and use that much CPU meanwhile
 * @param onThread opens the same session on an engine thread
 * @returns the session
 * @throws ReachError as `openSession` does
 * @example const session = await openInlineFirstSession({ pack: { files } }, {}, 50, (r, o) => openIsolatedSession(r, o));
 */
export async function openInlineFirstSession(request: WireRequest, options: { signal?: AbortSignal }, budgetMs: number, onThread: (request: WireRequest, options: { signal?: AbortSignal }) => Promise<IsolatedSession>): Promise<IsolatedSession> {
  if (await mayReachNetwork(request)) return await onThread(request, options);
  const here = await openInline(request, options, budgetMs);
  const { session: inline, watch, turn, forward } = here;
  const calls: [string, JsonValue][] = [];
  let thread: Promise<IsolatedSession> | null = null;
  /** What passes the caller's signal on to the thread's session (removed when the session closes). */
  let stop: (() => void) | null = null;
  /** The session on a thread, with the calls before `upTo` made there again (once; later callers share it). */
  const moved = (upTo: number): Promise<IsolatedSession> =>
    (thread ??= (async () => {
      options.signal?.removeEventListener("abort", forward);
      const own = new AbortController();
      const session = await onThread(request, { signal: own.signal });
      for (const [tool, args] of calls.slice(0, upTo)) await session.call(tool, args).catch(() => undefined); // answered before: same outcome
      // A signal that came while the call held this thread is handled only now (a turn of the loop runs its handler).
      await turn(true);
      stop = (): void => void (own.signal.aborted || own.abort(options.signal?.reason ?? "abort"));
      if (options.signal?.aborted === true) stop();
      else options.signal?.addEventListener("abort", stop, { once: true });
      return session;
    })());
  const onInline = async (tool: string, args: JsonValue): Promise<SessionCall | null> => {
    here.hold = watch.begin();
    try {
      const answer = await inline.call(tool, args);
      return here.promoted ? null : answer;
    } catch (err) {
      if (here.promoted) return null;
      throw err;
    } finally {
      here.hold = null;
      watch.end();
    }
  };
  const call = async (tool: string, args: JsonValue): Promise<SessionCall> => {
    const index = calls.push([tool, args]) - 1;
    signalAt(`call:${index + 1}`); // a test hook (REACH_WASM_TEST_SIGNAL)
    if (!here.promoted) {
      const answer = await onInline(tool, args);
      if (answer !== null) return answer;
    }
    return await (await moved(index)).call(tool, args);
  };
  // One call at a time, as the session itself takes them: each call's hold is its own, and the calls made again on a
  // thread are exactly those answered before.
  let busy: Promise<unknown> = Promise.resolve();
  const queued = <T>(f: () => Promise<T>): Promise<T> => {
    const next = busy.then(f);
    busy = next.catch(() => undefined);
    return next;
  };
  return {
    tools: inline.tools(),
    pack: inline.pack,
    budget: inline.budget,
    scope: inline.scope,
    call: (tool, args) => queued(() => call(tool, args)),
    workspace: async () => (thread === null ? inline.workspace() : await (await thread).workspace()),
    readWorkspace: async (path) => (thread === null ? inline.readWorkspace(path) : await (await thread).readWorkspace(path)),
    close: (aborted = false) =>
      queued(async () => {
        if (thread === null) {
          try {
            return await inline.close(aborted); // a signal that came during the last call is still passed on here
          } finally {
            options.signal?.removeEventListener("abort", forward);
          }
        }
        try {
          return await (await thread).close(aborted);
        } finally {
          if (stop !== null) options.signal?.removeEventListener("abort", stop);
        }
      }),
  };
}
