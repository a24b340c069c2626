/**
 * The platform an engine call runs on, for Node and Deno (`reach-wasm/node`), as one environment object: the QuickJS
 * engine and the Python interpreter read from the installed packages, the runtime's native SHA-256, its real clock,
 * the integrity-checked disk caches of validated documents, fuel-instrumented modules and component glue, a turn of
 * the event loop, and step threads. Nothing is installed for the process: importing this module, or calling
 * {@link defaultEnvironment}, changes nothing; an engine call uses what the environment it is given holds (all of
 * it speed-ups or runtime services: a run's record is the same without the caches, the backend and the clock).
 * @module
 */
import type { EngineEnvironment } from "../engine/mod.ts";
import { diskCaches } from "../platform/disk-caches.ts";
import { loopTurn } from "../platform/loop-turn.ts";
import { nativeSha256Backend } from "../platform/native-sha256.ts";
import { readPythonWasm } from "../platform/python-engine.ts";
import { readQuickJsEngineWasm } from "../platform/quickjs-engine.ts";
import { processClock } from "../platform/real-clock.ts";
import { launchMcpStdio } from "../platform/mcp-stdio.ts";
import { StepThreadPool, stepThreadsAvailable } from "./step-thread.ts";

/** Options of {@link defaultEnvironment}. */
export type DefaultEnvironmentOptions = {
  /**
   * Keep instrumented modules, component glue and validated documents in the disk caches
   * (`~/.cache/reach-wasm/{fuel,components,documents}`,
   * `$REACH_WASM_CACHE`; default true).
   */
  diskCache?: boolean;
  /** The step threads' module (default: `step-worker` beside `step-thread.ts`, in its layout). */
  stepWorkerUrl?: URL;
};

/**
 * The engine environment of this runtime: QuickJS and Python engines, native SHA-256, the real clock, the disk
 * caches, and step threads for runs whose steps may run at the same time (`parallel`) where threads can start.
 * @param options whether to use the disk caches, and where the step threads' module is
 * @returns the environment to hand to `runEngine`, `replayCapsule`, sessions
 * @example
 * ```ts
 * import { runEngine } from "../engine/engine.ts";
 * import { readPackFiles } from "./pack-files.ts";
 * const run = await runEngine(defaultEnvironment(), { pack: { files: await readPackFiles("packs/hello") } });
 * console.log(run.status);
 * ```
 */
export function defaultEnvironment(options: DefaultEnvironmentOptions = {}): EngineEnvironment {
  const threads = options.stepWorkerUrl === undefined ? {} : { workerUrl: options.stepWorkerUrl };
  const { documents, fuel, components } = options.diskCache === false ? { documents: null, fuel: null, components: null } : diskCaches();
  return {
    quickjsEngine: readQuickJsEngineWasm,
    pythonEngine: readPythonWasm,
    turn: loopTurn(),
    sha256: nativeSha256Backend,
    clock: processClock,
    mcpStdio: launchMcpStdio,
    ...(documents === null ? {} : { documents }),
    ...(fuel === null ? {} : { meteredModules: fuel }),
    ...(components === null ? {} : { componentGlue: components }),
    ...(stepThreadsAvailable(threads) ? { stepThreads: (size: number) => new StepThreadPool(size, threads) } : {}),
  };
}
