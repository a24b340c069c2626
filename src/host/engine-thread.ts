/**
 * The engine call on its own thread (Node `worker_threads`, Deno Web Workers), so that the calling thread's event
 * loop stays free while a tool computes: a signal, a timer, a cancel request or an MCP message is handled at once.
 * The run is stopped where it can be recorded — a word of shared memory the worker's fuel meter reads at every
 * refill (`interrupted`), and an abort message for a tool waiting on the host — so the run still ends ABORTED with a
 * capsule that verifies and replays (ARCHITECTURE "Stopping a tool that will not stop").
 *
 * One worker serves one run (`runIsolated`) or one session (`openIsolatedSession`); it exits when it is done. If a
 * worker does not answer an abort within {@link STOP_GRACE_MS} (something no fuel meter reaches), it is terminated
 * and the call fails with `EXEC_ABORTED` and no capsule.
 *
 * The worker's module is `engine-worker` beside this one, in its layout (`siblingScript`: the sources, tsc's output,
 * the CLI bundle), or `workerUrl`. Where no thread can start from it (Node running the TypeScript sources: the tests,
 * vite-node), the engine call runs on the calling thread instead (`engine-inline.ts`): the interrupt word and the
 * abort wiring stay the same; only a tool that holds the thread cannot be interrupted until it reaches a fuel refill
 * that reads the word. The threads themselves are the platform's (`src/platform/threads.ts`).
 * @module
 */
import { isErrorCode, ReachError } from "../protocol/mod.ts";
import { siblingScript } from "../platform/sibling.ts";
import { canStartThread, startThread } from "../platform/threads.ts";
import type { ThreadPort } from "../platform/threads.ts";
import type { ErrorDetails } from "../protocol/mod.ts";
import type { EngineRun } from "../engine/mod.ts";
import type { SessionBudget, SessionScope, SessionTool } from "../engine/mod.ts";
import type { RunProgress } from "../engine/mod.ts";
import { interruptCode } from "./_interrupt.ts";
import { openInlineSession, runInline, runInlineFirst, stoppedAtEnd } from "./engine-inline.ts";
import { openInlineFirstSession } from "./engine-inline-session.ts";
import type { FromWorker, IsolatedSession, ToWorker, WireCall, WireRequest, WireRun } from "./engine-wire.ts";

export { INTERRUPT_REASONS } from "./_interrupt.ts";

/** How long a worker may take to stop after an abort before it is terminated. */
export const STOP_GRACE_MS = 10_000;

export type { FromWorker, IsolatedSession, ToWorker, WireCall, WireRequest, WireRun } from "./engine-wire.ts";

type Port = ThreadPort<ToWorker, FromWorker>;

/** Where the engine thread's module is (default: `engine-worker` beside this module, in its layout). */
export type EngineThreadOptions = { workerUrl?: URL };

/** The engine thread's module, and whether a thread can start from it here (else the calls run inline). */
function worker(options: EngineThreadOptions): { url: URL; inline: boolean } {
  const url = options.workerUrl ?? siblingScript("./engine-worker", import.meta.url);
  return { url, inline: !canStartThread(url) };
}

/** A ReachError rebuilt from the details a worker sent. */
function errorFromDetails(e: ErrorDetails): ReachError {
  const code = isErrorCode(e.code) ? e.code : "EXEC_TOOL_FAILED";
  return new ReachError(code, e.message, { details: e.details ?? {}, ...(typeof e.recoverable === "boolean" ? { recoverable: e.recoverable } : {}) });
}

function runOf(wire: WireRun): EngineRun {
  return { ...wire, error: wire.error === null ? null : errorFromDetails(wire.error) };
}

/** A worker, its interrupt word, and the wiring of an abort signal to both. */
async function open(url: URL, signal: AbortSignal | undefined): Promise<{ port: Port; interrupt: SharedArrayBuffer; failed: Promise<never>; stop: () => void; dispose: () => void }> {
  const port = await startThread<ToWorker, FromWorker>(url);
  const interrupt = new SharedArrayBuffer(8);
  const word = new Int32Array(interrupt);
  let reject: (e: Error) => void = () => {};
  const failed = new Promise<never>((_, r) => (reject = r));
  failed.catch(() => undefined);
  let killer: ReturnType<typeof setTimeout> | undefined;
  const stop = (): void => {
    Atomics.store(word, 0, interruptCode(signal?.reason));
    port.post({ kind: "abort", reason: String(signal?.reason ?? "abort") });
    killer ??= setTimeout(() => {
      port.terminate();
      reject(new ReachError("EXEC_ABORTED", `the engine did not stop within ${STOP_GRACE_MS / 1000} s of the abort and was terminated; no capsule was written`));
    }, STOP_GRACE_MS);
  };
  port.onError((e) => reject(new ReachError("EXEC_RESOURCE_UNAVAILABLE", `the engine thread failed: ${e.message}`, { cause: e })));
  if (signal?.aborted === true) stop();
  else signal?.addEventListener("abort", stop, { once: true });
  return { port, interrupt, failed, stop, dispose: () => {
    clearTimeout(killer);
    signal?.removeEventListener("abort", stop);
    port.terminate();
  } };
}

/**
 * Run a pack on an engine thread (the engine call `runEngine`, isolated).
 * @param request the pack and options (no functions: `network` gives tools the runtime's fetch)
 * @param options the abort signal, a progress callback, `inlineFirstMs`: try the run on the calling thread first,
 *   for at most that long (`engine-inline.ts`: short runs then cost no thread; the record is the same), and
 *   `workerUrl`, the engine thread's module (module notes)
 * @returns the run
 * @throws ReachError as `runEngine` does, or `EXEC_ABORTED` when the worker had to be terminated
 * @example
 * ```ts
 * import { readPackFiles } from "./pack-files.ts";
 * const controller = new AbortController(); // controller.abort("SIGINT") stops even a tool in a tight loop
 * const run = await runIsolated({ pack: { files: await readPackFiles("packs/hello") } }, { signal: controller.signal });
 * console.log(run.status, run.runHash);
 * ```
 */
export async function runIsolated(request: WireRequest, options: { signal?: AbortSignal; onProgress?: (p: RunProgress) => void; inlineFirstMs?: number } & EngineThreadOptions = {}): Promise<EngineRun> {
  const { inlineFirstMs, workerUrl: _url, ...rest } = options;
  const { url, inline } = worker(options);
  const run = inline ? await runInline(request, rest) : inlineFirstMs !== undefined ? await runInlineFirst(request, rest, inlineFirstMs, (r, o) => runOnThread(url, r, o)) : await runOnThread(url, request, rest);
  return await stoppedAtEnd(run, request, rest, (r) => (inline ? runInline(r, {}) : runOnThread(url, r, {})));
}

async function runOnThread(url: URL, request: WireRequest, options: { signal?: AbortSignal; onProgress?: (p: RunProgress) => void }): Promise<EngineRun> {
  const w = await open(url, options.signal);
  try {
    const done = new Promise<EngineRun>((resolve, reject) => {
      w.port.onMessage((m) => {
        if (m.kind === "progress") options.onProgress?.(m.progress);
        else if (m.kind === "done") resolve(runOf(m.run));
        else if (m.kind === "error") reject(errorFromDetails(m.error));
      });
    });
    w.port.post({ kind: "run", request, interrupt: w.interrupt });
    return await Promise.race([done, w.failed]);
  } finally {
    w.dispose();
  }
}


/**
 * Open a session run on an engine thread (the engine call `openSession`, isolated).
 * @param request the pack and options
 * @param options the abort signal (it ends the session ABORTED, even inside a call), `inlineFirstMs`: make calls
 *   on the calling thread while each holds it at most that long (`engine-inline-session.ts`: a call then crosses no
 *   thread; the record is the same), and `workerUrl`, the engine thread's module (module notes)
 * @returns the session
 * @throws ReachError as `openSession` does
 * @example
 * ```ts
 * import { readPackFiles } from "./pack-files.ts";
 * const session = await openIsolatedSession({ pack: { files: await readPackFiles("packs/hello") } });
 * console.log(session.tools.map((t) => t.name), (await session.call("wordcount", { text: "a" })).ok);
 * const run = await session.close();
 * ```
 */
export async function openIsolatedSession(request: WireRequest, options: { signal?: AbortSignal; inlineFirstMs?: number } & EngineThreadOptions = {}): Promise<IsolatedSession> {
  const { inlineFirstMs, workerUrl, ...rest } = options;
  const { url, inline } = worker(options);
  if (inline) return await openInlineSession(request, rest);
  const here = workerUrl === undefined ? {} : { workerUrl };
  if (inlineFirstMs !== undefined) return await openInlineFirstSession(request, rest, inlineFirstMs, (r, o) => openIsolatedSession(r, { ...o, ...here }));
  const w = await open(url, options.signal);
  const answers = new Map<number, (a: WireCall) => void>();
  const replies = new Map<number, (m: FromWorker) => void>();
  let closed: ((run: EngineRun) => void) | null = null;
  let closeFailed: ((e: Error) => void) | null = null;
  let ready: (m: { tools: SessionTool[]; pack: EngineRun["pack"]; budget: SessionBudget; scope: SessionScope }) => void = () => {};
  let readyFailed: (e: Error) => void = () => {};
  const opened = new Promise<{ tools: SessionTool[]; pack: EngineRun["pack"]; budget: SessionBudget; scope: SessionScope }>((res, rej) => ((ready = res), (readyFailed = rej)));
  w.port.onMessage((m) => {
    if (m.kind === "session") ready(m);
    else if (m.kind === "answer") answers.get(m.id)?.(m.answer);
    else if (m.kind === "workspace" || m.kind === "file") replies.get(m.id)?.(m);
    else if (m.kind === "done") closed?.(runOf(m.run));
    else if (m.kind === "error") (closeFailed ?? readyFailed)(errorFromDetails(m.error));
  });
  w.port.post({ kind: "session", request, interrupt: w.interrupt });
  const { tools, pack, budget, scope } = await Promise.race([opened, w.failed]).catch((e: unknown) => {
    w.dispose();
    throw e;
  });
  let next = 0;
  const ask = async (message: ToWorker & { id: number }): Promise<FromWorker> => {
    const reply = new Promise<FromWorker>((res) => replies.set(message.id, res));
    w.port.post(message);
    try {
      return await Promise.race([reply, w.failed]);
    } finally {
      replies.delete(message.id);
    }
  };
  return {
    tools,
    pack,
    budget,
    scope,
    workspace: async () => {
      const m = await ask({ kind: "workspace", id: next++ });
      return m.kind === "workspace" ? m.files : [];
    },
    readWorkspace: async (path) => {
      const m = await ask({ kind: "read", id: next++, path });
      return m.kind === "file" ? m.bytes : null;
    },
    call: async (tool, args) => {
      const id = next++;
      const wire = await Promise.race([new Promise<WireCall>((res) => answers.set(id, res)), (w.port.post({ kind: "call", id, tool, args }), w.failed)]);
      answers.delete(id);
      if ("thrown" in wire) throw errorFromDetails(wire.thrown);
      return wire.ok ? wire : { ...wire, error: errorFromDetails(wire.error) };
    },
    close: async (aborted = false) => {
      const run = new Promise<EngineRun>((res, rej) => ((closed = res), (closeFailed = rej)));
      w.port.post({ kind: "close", aborted });
      try {
        return await Promise.race([run, w.failed]);
      } finally {
        w.dispose();
      }
    },
  };
}

/**
 * Engine threads kept for many runs (a service worker): `size` threads, each serving one run at a time. A thread that
 * had to be terminated (it did not stop after an abort) is replaced.
 * @example
 * ```ts
 * declare const archive: Uint8Array; // a pack's .tar.gz
 * const pool = new EngineThreadPool(4); // or new EngineThreadPool(4, { workerUrl }): the engine thread's module
 * const controller = new AbortController();
 * const run = await pool.run({ pack: { archive } }, { signal: controller.signal });
 * pool.close();
 * console.log(run.status);
 * ```
 */
export class EngineThreadPool {
  readonly #size: number;
  readonly #idle: Port[] = [];
  #live = 0;
  readonly #waiting: ((p: Port) => void)[] = [];
  readonly #worker: { url: URL; inline: boolean };

  /**
   * @param size how many threads at most (1..64)
   * @param options `workerUrl`, the engine thread's module (module notes)
   */
  constructor(size: number, options: EngineThreadOptions = {}) {
    if (!Number.isSafeInteger(size) || size < 1 || size > 64) throw new RangeError(`"size" expected 1..64, got ${size}`);
    this.#size = size;
    this.#worker = worker(options);
  }

  async #take(): Promise<Port> {
    const idle = this.#idle.pop();
    if (idle !== undefined) {
      idle.hold(true);
      return idle;
    }
    if (this.#live < this.#size) {
      this.#live++;
      return await startThread<ToWorker, FromWorker>(this.#worker.url).catch((err: unknown) => {
        this.#live--;
        throw err;
      });
    }
    return await new Promise<Port>((resolve) => this.#waiting.push(resolve));
  }

  #give(port: Port | null): void {
    if (port === null) {
      this.#live--;
      return;
    }
    const next = this.#waiting.shift();
    if (next !== undefined) next(port);
    else {
      port.hold(false);
      this.#idle.push(port);
    }
  }

  /**
   * Run a pack on a pooled thread (as {@link runIsolated}).
   * @param request the pack and options
   * @param options the abort signal and a progress callback
   * @returns the run
   */
  async run(request: WireRequest, options: { signal?: AbortSignal; onProgress?: (p: RunProgress) => void } = {}): Promise<EngineRun> {
    if (this.#worker.inline) return await runInline(request, options);
    const port = await this.#take();
    const interrupt = new SharedArrayBuffer(8);
    let healthy = true;
    const stop = (): void => {
      Atomics.store(new Int32Array(interrupt), 0, interruptCode(options.signal?.reason));
      port.post({ kind: "abort", reason: String(options.signal?.reason ?? "abort") });
    };
    if (options.signal?.aborted === true) stop();
    else options.signal?.addEventListener("abort", stop, { once: true });
    try {
      return await new Promise<EngineRun>((resolve, reject) => {
        let killer: ReturnType<typeof setTimeout> | undefined;
        options.signal?.addEventListener("abort", () => (killer = setTimeout(() => {
          healthy = false;
          port.terminate();
          reject(new ReachError("EXEC_ABORTED", `the engine did not stop within ${STOP_GRACE_MS / 1000} s of the abort and was terminated; no capsule was written`));
        }, STOP_GRACE_MS)), { once: true });
        port.onMessage((m) => {
          if (m.kind === "progress") options.onProgress?.(m.progress);
          else if (m.kind === "done" || m.kind === "error") {
            clearTimeout(killer);
            if (m.kind === "done") resolve(runOf(m.run));
            else reject(errorFromDetails(m.error));
          }
        });
        port.onError((e) => {
          healthy = false;
          reject(new ReachError("EXEC_RESOURCE_UNAVAILABLE", `the engine thread failed: ${e.message}`, { cause: e }));
        });
        port.post({ kind: "run", request, interrupt });
      });
    } finally {
      options.signal?.removeEventListener("abort", stop);
      port.clearListeners();
      this.#give(healthy ? port : null);
    }
  }

  /** Stop every thread. */
  close(): void {
    for (const p of this.#idle.splice(0)) p.terminate();
  }
}
