/**
 * Step threads (`EngineEnvironment.stepThreads`): a pool of platform threads (`src/platform/threads.ts`) on which a
 * run's independent steps execute at the same time (`src/engine/step-graph.ts`). Each thread runs one step job at a time
 * (`src/engine/step-job.ts`: the job carries everything the step may see, the result everything it did), keeps its
 * sandboxes warm between jobs of the same run, and is stopped when the run ends.
 *
 * A job is stopped through a word of shared memory its tool's fuel meter reads at every refill, plus a message for a
 * tool waiting on the host. A thread that does not stop within {@link STEP_STOP_GRACE_MS} is terminated (and
 * replaced); its job fails with `EXEC_ABORTED`.
 * @module
 */
import { siblingScript } from "../platform/sibling.ts";
import { canStartThread, startThread } from "../platform/threads.ts";
import { isErrorCode, ReachError } from "../protocol/mod.ts";
import type { ErrorDetails } from "../protocol/mod.ts";
import type { StepJob, StepJobResult, StepPool } from "../engine/mod.ts";

/** How long a step thread may take to stop after its job was aborted before it is terminated. */
export const STEP_STOP_GRACE_MS = 10_000;

/** Messages to a step thread. */
export type ToStepWorker = { kind: "job"; id: number; job: StepJob; interrupt: SharedArrayBuffer } | { kind: "abort"; id: number };
/** Messages from a step thread. */
export type FromStepWorker = { kind: "result"; id: number; result: StepJobResult } | { kind: "error"; id: number; error: ErrorDetails };

type Thread = { post(m: ToStepWorker): void; terminate(): void; hold(busy: boolean): void; busy: boolean };

/** Where the step threads' module is (default: `step-worker` beside this module, in its layout). */
export type StepThreadOptions = { workerUrl?: URL };

/**
 * The step threads' module: `workerUrl`, else `step-worker` beside this module.
 * @param options where it is
 * @returns its URL
 * @example stepWorkerUrl({}).pathname // "/app/dist/host/step-worker.js"
 */
export function stepWorkerUrl(options: StepThreadOptions = {}): URL {
  return options.workerUrl ?? siblingScript("./step-worker", import.meta.url);
}

/**
 * Whether step threads can start here: always on Deno; on Node once their module is compiled JavaScript (the build,
 * the CLI bundle, a `workerUrl` naming one): Node cannot start a thread from TypeScript source.
 * @param options where their module is
 * @returns true when {@link StepThreadPool} can start threads
 * @example stepThreadsAvailable() // true in the built CLI
 */
export function stepThreadsAvailable(options: StepThreadOptions = {}): boolean {
  return canStartThread(stepWorkerUrl(options));
}

async function spawn(url: URL, onMessage: (m: FromStepWorker) => void, onError: (e: Error) => void): Promise<Thread> {
  const port = await startThread<ToStepWorker, FromStepWorker>(url);
  port.onMessage(onMessage);
  port.onError(onError);
  port.hold(false);
  return { post: (m) => port.post(m), terminate: () => port.terminate(), hold: (busy) => port.hold(busy), busy: false };
}

type Pending = { job: StepJob; signal: AbortSignal; resolve: (r: StepJobResult | null) => void; reject: (e: Error) => void };

/**
 * A pool of step threads.
 * @example
 * const pool = new StepThreadPool(2);
 * const result = await pool.run(job, new AbortController().signal);
 * pool.close();
 */
export class StepThreadPool implements StepPool {
  readonly #size: number;
  readonly #threads: Thread[] = [];
  readonly #queue: Pending[] = [];
  /** Answers of running jobs, by job id. */
  readonly #handlers = new Map<number, (m: FromStepWorker) => void>();
  /** How to fail the job a thread runs when the thread dies. */
  readonly #running = new Map<Thread, (e: Error) => void>();
  #next = 0;
  #closed = false;
  readonly #url: URL;

  /**
   * @param size most threads (1..64)
   * @param options `workerUrl`: the step threads' module (default: `step-worker` beside this module)
   */
  constructor(size: number, options: StepThreadOptions = {}) {
    if (!Number.isSafeInteger(size) || size < 1 || size > 64) throw new RangeError(`"size" expected 1..64, got ${size}`);
    this.#size = size;
    this.#url = stepWorkerUrl(options);
  }

  /**
   * Run a job on a free thread (queued while all are busy).
   * @param job the job
   * @param signal aborts it (queued: it never starts and resolves null)
   * @returns its result, or null when it was aborted before it started
   */
  run(job: StepJob, signal: AbortSignal): Promise<StepJobResult | null> {
    if (this.#closed) return Promise.reject(new ReachError("EXEC_RESOURCE_UNAVAILABLE", "the step threads were closed; start a new run"));
    return new Promise((resolve, reject) => {
      this.#queue.push({ job, signal, resolve, reject });
      void this.#pump();
    });
  }

  async #pump(): Promise<void> {
    while (this.#queue.length > 0 && !this.#closed) {
      const pending = this.#queue[0]!;
      if (pending.signal.aborted) {
        this.#queue.shift();
        pending.resolve(null);
        continue;
      }
      let thread = this.#threads.find((t) => !t.busy);
      if (thread === undefined && this.#threads.length >= this.#size) return;
      this.#queue.shift();
      if (thread === undefined) {
        const slot = this.#threads.length;
        const placeholder: Thread = { post: () => {}, terminate: () => {}, hold: () => {}, busy: true };
        this.#threads.push(placeholder);
        try {
          thread = await spawn(this.#url, (m) => this.#handlers.get(m.id)?.(m), (e) => this.#failed(thread!, e));
        } catch (err) {
          this.#threads.splice(slot, 1);
          pending.reject(err instanceof Error ? err : new Error(String(err)));
          continue;
        }
        this.#threads[this.#threads.indexOf(placeholder)] = thread;
      }
      this.#start(thread, pending);
    }
  }

  #start(thread: Thread, p: Pending): void {
    const id = this.#next++;
    const interrupt = new SharedArrayBuffer(8);
    thread.busy = true;
    thread.hold(true);
    let killer: ReturnType<typeof setTimeout> | undefined;
    const done = (): void => {
      clearTimeout(killer);
      p.signal.removeEventListener("abort", stop);
      this.#handlers.delete(id);
      this.#running.delete(thread);
      thread.busy = false;
      thread.hold(false);
      void this.#pump();
    };
    const stop = (): void => {
      Atomics.store(new Int32Array(interrupt), 0, 1);
      thread.post({ kind: "abort", id });
      killer ??= setTimeout(() => {
        thread.terminate();
        this.#threads.splice(this.#threads.indexOf(thread), 1);
        done();
        p.reject(new ReachError("EXEC_ABORTED", `a step thread did not stop within ${STEP_STOP_GRACE_MS / 1000} s of an abort and was terminated`));
      }, STEP_STOP_GRACE_MS);
    };
    this.#handlers.set(id, (m) => {
      done();
      if (m.kind === "result") p.resolve(m.result);
      else p.reject(new ReachError(isErrorCode(m.error.code) ? m.error.code : "EXEC_TOOL_FAILED", m.error.message, { details: m.error.details ?? {} }));
    });
    this.#running.set(thread, (e) => {
      done();
      p.reject(e);
    });
    p.signal.addEventListener("abort", stop, { once: true });
    thread.post({ kind: "job", id, job: p.job, interrupt });
  }

  #failed(thread: Thread, e: Error): void {
    const i = this.#threads.indexOf(thread);
    if (i >= 0) this.#threads.splice(i, 1);
    thread.terminate();
    this.#running.get(thread)?.(new ReachError("EXEC_RESOURCE_UNAVAILABLE", `a step thread failed: ${e.message}`, { cause: e }));
  }

  /** Stop every thread; queued jobs resolve null. */
  close(): void {
    this.#closed = true;
    for (const p of this.#queue.splice(0)) p.resolve(null);
    for (const t of this.#threads.splice(0)) t.terminate();
  }
}
