/**
 * The sandboxes of one run. Each run gets its own runners (so two runs in a process share no engine instance);
 * what they share is immutable: compiled and fuel-instrumented modules cached by digest.
 * @module
 */
import type { QuickJsRunnerOptions } from "../sandbox/mod.ts";
import { QuickJsRunner } from "../sandbox/mod.ts";
import type { TranspiledComponent } from "../sandbox/mod.ts";
import type { ToolRunner } from "../sandbox/mod.ts";
import { WasmToolRunner } from "../sandbox/mod.ts";
import type { Preopen } from "../sandbox/mod.ts";
import { TEMP_ROOT } from "../sandbox/mod.ts";
import type { StepTransaction } from "../sandbox/mod.ts";
import type { LoadPackOptions, PackTool } from "./pack.ts";
import { ReachError } from "../protocol/mod.ts";
import { InfraRunner } from "../sandbox/mod.ts";
import type { PythonRunner, PythonWasmSource } from "../sandbox/mod.ts";
import type { StepPool } from "./step-job.ts";
import type { DocumentStore } from "./document-cache.ts";
import type { MeteredModuleStore } from "../sandbox/mod.ts";
import type { ComponentGlueStore } from "../sandbox/mod.ts";
import { getSha256Backend, setSha256Backend } from "../canonical/mod.ts";
import type { Sha256Backend } from "../canonical/mod.ts";
import { monotonicMs } from "../determinism/mod.ts";
import type { RealClock } from "../determinism/mod.ts";
import { McpRunner, McpSessions } from "../sandbox/mod.ts";
import type { McpSessionOptions } from "../sandbox/mod.ts";
import type { McpStdioLauncher } from "../protocol/mod.ts";
import type { McpServer } from "../protocol/mod.ts";
import type { SecretValues } from "../sandbox/mod.ts";

/**
 * What the host platform provides to the engine: the one way it is handed in (nothing is installed for a process;
 * `reach-wasm/node`'s `defaultEnvironment` gives Node's and Deno's). Every field but the QuickJS engine is optional;
 * the caches, the hashing backend and the clock are speed-ups only: a run's record is the same without them.
 */
export type EngineEnvironment = {
  /** The QuickJS engine's WebAssembly bytes or a loader (src/platform `readQuickJsEngineWasm`). */
  quickjsEngine: QuickJsRunnerOptions["engineWasm"];
  /** The Python interpreter's WebAssembly bytes or a loader (src/platform `readPythonWasm`); without it `python` tools and `exec_python` are unavailable. */
  pythonEngine?: PythonWasmSource;
  /**
   * The glue of a component tool (default `loadComponent` of `src/sandbox/component/load.ts`: jco transpiles any
   * component on first use, the glue is checked before it runs, and kept in memory and the installed disk store).
   */
  components?: (code: Uint8Array) => Promise<TranspiledComponent>;
  /**
   * Threads for steps that run at the same time (`step-graph.ts`): `size` threads at most. Without them, steps run
   * one at a time on the engine's thread (`parallel` then changes only the order they are tried in, never the record).
   */
  stepThreads?: (size: number) => StepPool;
  /**
   * Let the calling thread's event loop turn once (a macrotask), so that what waits for it runs: a signal handler, a
   * cancel request, an abort message. A run that has an abort signal turns the loop at its abort checks outside any
   * invocation (before planning, before each step it runs on this thread, before its terminal state), so an abort
   * that came while a tool held the thread is acted on there (`run.ts`). `last` marks the check before the terminal
   * state, which must see every signal that came before it (a turn between steps may be skipped when one was just
   * taken). Default: a zero-delay timer.
   */
  turn?: (last?: boolean) => Promise<void>;
  /**
   * Where validated pack and plan documents are kept between processes (`document-cache.ts`; any failure is a miss).
   * Without it every document is validated.
   */
  documents?: DocumentStore;
  /**
   * Where fuel-instrumented modules are kept between processes (`src/sandbox/fuel/cache.ts`; any failure is a miss).
   * Without it they are kept in memory only.
   */
  meteredModules?: MeteredModuleStore;
  /**
   * Where component glue is kept between processes (`src/sandbox/component/load.ts`; any failure is a miss), for the
   * default `components`. Without it glue is kept in memory only.
   */
  componentGlue?: ComponentGlueStore;
  /**
   * The SHA-256 implementation (e.g. the runtime's native one). Hashing is called from every layer, so an engine call
   * makes it the process's backend (`canonical/sha256.ts`, checked against a known answer first); every backend gives
   * the same digests. Default: the portable one (`@noble/hashes`).
   */
  sha256?: Sha256Backend;
  /**
   * The real clock: durations in run files, watchdogs, when to stop; never what is hashed. Default `performance`
   * (`src/determinism/real-clock.ts`).
   */
  clock?: RealClock;
  /**
   * Starts a pack's stdio MCP servers (`src/platform/mcp-stdio.ts`: only the declared env plus PATH, a scratch
   * working directory, its process group stopped at the run's end). Without it a stdio server cannot be started
   * (Streamable HTTP servers need only fetch); a replay never starts one.
   */
  mcpStdio?: McpStdioLauncher;
};

/**
 * Make the environment's SHA-256 backend the process's (see {@link EngineEnvironment.sha256}); a no-op when it gives
 * none or it is already in use.
 * @param env the platform
 * @returns nothing
 * @throws TypeError when the backend fails its known-answer test
 * @example useHashing(env); // sha256Hex now runs on env.sha256
 */
export function useHashing(env: EngineEnvironment): void {
  if (env.sha256 !== undefined && getSha256Backend() !== env.sha256) setSha256Backend(env.sha256);
}

/**
 * The real clock's monotonic reading of this environment (see {@link EngineEnvironment.clock}).
 * @param env the platform
 * @returns milliseconds from an arbitrary origin, never going back
 * @example const started = realNow(env)();
 */
export function realNow(env: EngineEnvironment): () => number {
  const clock = env.clock;
  return clock === undefined ? monotonicMs : () => clock.monotonicMs();
}

/**
 * One turn of the event loop, through the platform's `turn` (default: a zero-delay timer, which every runtime has).
 * @param env the platform
 * @param last the check before a run's terminal state (a full turn)
 * @returns once the loop turned
 * @example await turnLoop(env, true); // a signal that came while this thread computed has been handled now
 */
export function turnLoop(env: EngineEnvironment, last = false): Promise<void> {
  return env.turn?.(last) ?? new Promise<void>((resolve) => void setTimeout(resolve, 0));
}

/**
 * The value of a declared secret for `{{secret:NAME}}` in an MCP server's `env` (`runRunners`' `mcp.secret`): the
 * caller's function, else the run's `secrets` (live runs; a replay starts no server).
 * @param request the run's request (`RunRequest`): its `secretValue`, `secrets` and, in a replay, `player`
 * @returns the lookup, or nothing when the run has no values
 */
export function mcpSecretLookup(request: { readonly secretValue?: (name: string) => string | undefined; readonly secrets?: SecretValues; readonly player?: unknown }): { secret?: (name: string) => string | undefined } {
  if (request.secretValue !== undefined) return { secret: request.secretValue };
  const values = request.secrets;
  if (values === undefined || request.player !== undefined) return {};
  return { secret: (name) => (Object.hasOwn(values, name) ? values[name] : undefined) };
}

/**
 * The runners of one run.
 * @param env the platform's engine and components
 * @param roots the workspace roots to preopen for WASI tools (each as `/<root>`, plus `/temp`); null: no preopens
 *   at all (the pack lacks the `filesystem` permission)
 * @param mcp the pack's MCP servers and how to reach them (the run's connections start on first use)
 * @returns `runnerFor(tool, step)`, `quickjs()` (the run's one QuickJS runner, also used by the planner) and `mcp`
 *   (the run's MCP connections: close them when the run ends)
 */
export function runRunners(env: EngineEnvironment, roots: readonly string[] | null, mcp?: { servers?: Readonly<Record<string, McpServer>> } & Omit<McpSessionOptions, "stdio">) {
  useHashing(env);
  let quickjs: QuickJsRunner | null = null;
  let component: ToolRunner | null = null;
  let python: Promise<PythonRunner> | null = null;
  const getPython = (): Promise<PythonRunner> => {
    const source = env.pythonEngine;
    if (source === undefined) return Promise.reject(new ReachError("EXEC_RESOURCE_UNAVAILABLE", "this build has no Python sandbox: the platform gave the engine no pythonEngine (reach-wasm/node's defaultEnvironment does)"));
    return (python ??= import("../sandbox/python/mod.ts").then((m) => new m.PythonRunner({ pythonWasm: source, ...metered })));
  };
  const metered = env.meteredModules === undefined ? {} : { meteredModules: env.meteredModules };
  let infra: InfraRunner | null = null;
  const preopens: Preopen[] | null = roots === null ? null : [...roots, TEMP_ROOT].map((r) => ({ guest: `/${r}`, path: r }));
  const getQuickJs = (): QuickJsRunner => (quickjs ??= new QuickJsRunner({ engineWasm: env.quickjsEngine, ...metered }));
  const runnerFor = async (tool: PackTool, step: StepTransaction): Promise<ToolRunner> => {
    switch (tool.definition.kind) {
      case "wasm":
        return new WasmToolRunner(preopens === null ? metered : { ...metered, filesystem: () => ({ fs: step, preopens }) });
      case "js":
        return getQuickJs();
      case "component": {
        if (component === null) {
          const { ComponentRunner } = await import("../sandbox/component/runner.ts");
          component = new ComponentRunner(env.components !== undefined ? { load: env.components } : env.componentGlue !== undefined ? { glueStore: env.componentGlue } : {});
        }
        return component;
      }
      case "python":
        return await getPython();
      case "infra":
        return (infra ??= new InfraRunner(async () => {
          const runner = await getPython();
          const { execPython } = await import("../sandbox/python/mod.ts");
          return (request, invocation) => execPython(runner, request, invocation);
        }));
      case "mcp":
        return new McpRunner(tool.definition.server ?? "", tool.definition.tool ?? "");
    }
  };
  const sessions = new McpSessions(mcp?.servers, {
    ...(env.mcpStdio === undefined ? {} : { stdio: env.mcpStdio }),
    ...(mcp?.fetch === undefined ? {} : { fetch: mcp.fetch }),
    ...(mcp?.secret === undefined ? {} : { secret: mcp.secret }),
  });
  return { runnerFor, quickjs: getQuickJs, mcp: sessions };
}

/**
 * What loading a pack takes from the platform (`loadPack`'s options): its components, and where validated documents
 * and component glue are kept.
 * @param env the platform
 * @returns the load options
 * @example const loaded = await loadPack(files, packLoading(env));
 */
export function packLoading(env: EngineEnvironment): LoadPackOptions {
  const load = env.components;
  return {
    ...(load === undefined ? {} : { prepareComponent: async (code: Uint8Array) => void (await load(code)) }),
    ...(env.documents === undefined ? {} : { documents: env.documents }),
    ...(env.componentGlue === undefined ? {} : { componentGlue: env.componentGlue }),
  };
}
