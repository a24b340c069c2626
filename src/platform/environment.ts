/**
 * The platform an engine call runs on, for Node and Deno (`reach-wasm/node`): the QuickJS engine and the Python
 * interpreter read from the installed packages, the runtime's native SHA-256 as the hashing backend, and the
 * integrity-checked disk caches of fuel-instrumented modules, component glue and validated documents. Importing this module changes
 * nothing; calling {@link defaultEnvironment} installs the hashing backend and the caches for the process (all pure
 * speed-ups: results are identical without them).
 * @module
 */
import type { EngineEnvironment } from "../engine/runners.ts";
import { installComponentStore } from "./component-store.ts";
import { installDocumentStore } from "./document-store.ts";
import { installFuelStore } from "./fuel-store.ts";
import { loopTurn } from "./_loop-turn.ts";
import { installNativeSha256 } from "./native-sha256.ts";
import { readPythonWasm } from "./python-engine.ts";
import { readQuickJsEngineWasm } from "./quickjs-engine.ts";
import { StepThreadPool, stepThreadsAvailable } from "./step-thread.ts";

/** Options of {@link defaultEnvironment}. */
export type DefaultEnvironmentOptions = {
  /**
   * Keep instrumented modules, component glue and validated documents in the disk caches
   * (`~/.cache/reach-wasm/{fuel,components,documents}`,
   * `$REACH_WASM_CACHE`; default true).
   */
  diskCache?: boolean;
};

let installed = false;

/**
 * The engine environment of this runtime: QuickJS and Python engines, native SHA-256, the fuel and component caches,
 * and step threads for runs whose steps may run at the same time (`parallel`).
 * @param options whether to use the disk cache
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
  if (!installed) {
    installed = true;
    installNativeSha256();
    if (options.diskCache !== false) {
      installFuelStore();
      installComponentStore();
      installDocumentStore();
    }
  }
  const env: EngineEnvironment = { quickjsEngine: readQuickJsEngineWasm, pythonEngine: readPythonWasm, turn: loopTurn() };
  // Asked when a run starts, so that a worker URL set later (the CLI bundle, tests) still counts.
  Object.defineProperty(env, "stepThreads", { enumerable: true, get: () => (stepThreadsAvailable() ? (size: number) => new StepThreadPool(size) : undefined) });
  return env;
}
