/**
 * Threads as a runtime primitive: Node `worker_threads` or Deno Web Workers, behind one small interface, so that the
 * code that runs the engine on threads (`src/host/`) never touches either runtime. A thread is a module started from
 * its URL; the two ends exchange structured-cloneable messages (and transfer buffers).
 * @module
 */
import { availableParallelism } from "node:os";

/** The starting end of a thread. */
export type ThreadPort<In, Out> = {
  /** Send a message to the thread (buffers in `transfer` move). */
  post(message: In, transfer?: Transferable[]): void;
  /** Add a listener for the thread's messages (several may listen). */
  onMessage(cb: (message: Out) => void): void;
  /** Add a listener for the thread's failure (an uncaught error inside it). */
  onError(cb: (error: Error) => void): void;
  /** Remove every listener (a pooled thread serves many callers, each with its own). */
  clearListeners(): void;
  /** Whether the thread keeps the process alive: busy yes, idle no (Node; Deno has no such switch). */
  hold(busy: boolean): void;
  /** Stop the thread. */
  terminate(): void;
};

/** The thread's own end: its channel to the thread that started it. */
export type ThreadChannel<In, Out> = {
  /** Send a message to the starting thread (buffers in `transfer` move). */
  send(message: Out, transfer?: Transferable[]): void;
  /** Listen for the starting thread's messages. */
  listen(cb: (message: In) => void): void;
};

const isDeno = (): boolean => (globalThis as { Deno?: unknown }).Deno !== undefined;

/**
 * Whether a thread can start from `url` here: always on Deno; on Node only from JavaScript (the build, the CLI
 * bundle), since Node cannot start a worker from TypeScript source (the tests and vite-node run from source).
 * @param url the thread's module
 * @returns true when {@link startThread} can start it
 * @example canStartThread(new URL("file:///app/dist/host/step-worker.js")) // true
 */
export function canStartThread(url: URL): boolean {
  return isDeno() || !url.pathname.endsWith(".ts");
}

/**
 * Start a thread from its module (it keeps the process alive until `hold(false)`).
 * @param url the thread's module
 * @returns the starting end
 * @example
 * const port = await startThread<string, string>(new URL("./echo-worker.js", import.meta.url));
 * port.onMessage((m) => console.log(m));
 * port.post("hello");
 */
export async function startThread<In, Out>(url: URL): Promise<ThreadPort<In, Out>> {
  // Listeners are per caller (a pooled thread serves many): kept here so that they can be removed between calls.
  let messageCbs: ((m: Out) => void)[] = [];
  let errorCbs: ((e: Error) => void)[] = [];
  const fanMessage = (m: Out): void => {
    for (const cb of messageCbs) cb(m);
  };
  const fanError = (e: Error): void => {
    for (const cb of errorCbs) cb(e);
  };
  const common = {
    onMessage: (cb: (m: Out) => void) => void messageCbs.push(cb),
    onError: (cb: (e: Error) => void) => void errorCbs.push(cb),
    clearListeners: () => {
      messageCbs = [];
      errorCbs = [];
    },
  };
  if (isDeno()) {
    const w = new Worker(url, { type: "module" });
    w.addEventListener("message", (e) => fanMessage((e as MessageEvent<Out>).data));
    w.addEventListener("error", (e) => {
      e.preventDefault();
      fanError(new Error((e as ErrorEvent).message));
    });
    return { ...common, post: (m, transfer) => w.postMessage(m, transfer ?? []), hold: () => {}, terminate: () => w.terminate() };
  }
  const { Worker: NodeWorker } = await import("node:worker_threads");
  const w = new NodeWorker(url);
  w.on("message", fanMessage);
  w.on("error", fanError);
  // A busy thread keeps the process alive; an idle pooled one does not.
  return { ...common, post: (m, transfer) => w.postMessage(m, transfer as never), hold: (busy) => void (busy ? w.ref() : w.unref()), terminate: () => void w.terminate() };
}

/**
 * The channel of the thread this code runs on to the thread that started it.
 * @returns the channel
 * @throws Error when this code does not run on a thread that {@link startThread} started
 * @example
 * const ch = await threadChannel<string, string>();
 * ch.listen((m) => ch.send(m.toUpperCase()));
 */
export async function threadChannel<In, Out>(): Promise<ThreadChannel<In, Out>> {
  const self = globalThis as unknown as { postMessage?: (m: unknown, t?: Transferable[]) => void; addEventListener?: (t: string, cb: (e: MessageEvent) => void) => void };
  if (isDeno()) {
    return { send: (m, t) => self.postMessage!(m, t ?? []), listen: (cb) => self.addEventListener!("message", (e) => cb(e.data as In)) };
  }
  const { parentPort } = await import("node:worker_threads");
  if (parentPort === null) throw new Error("this module runs only on a thread (startThread)");
  return { send: (m, t) => parentPort.postMessage(m, t as never), listen: (cb) => parentPort.on("message", cb) };
}

/**
 * The machine's cores (the default of `run --parallel`), at most 64.
 * @returns a positive integer
 * @example coreCount() // 2 on the CI machine
 */
export function coreCount(): number {
  const n = (globalThis as { navigator?: { hardwareConcurrency?: number } }).navigator?.hardwareConcurrency ?? availableParallelism();
  return Math.max(1, Math.min(64, Math.floor(n)));
}
