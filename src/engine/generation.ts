/**
 * One plan generation's state ledger (the first plan, or a replan's; a session's calls): what each step saw and did,
 * and the run's state as the emitted steps left it. All of it is a function of the plan and the steps' results,
 * never of when or where a step ran (`step-graph.ts` gives the rules):
 *
 * - the **view** of step `i` is the generation's base (the run's state when the plan was made) with the commits of
 *   its dependency closure applied in plan order ({@link Generation.viewOf});
 * - applying a step's commit onto a state that equals the view it ran on installs its state exactly (so a chain of
 *   steps behaves exactly as steps always did); onto any other state its changes are merged path by path, a later
 *   step's write winning (`mergeWorkspaceChanges`);
 * - the run's budgets are charged along dependency paths: a step may spend what the run's time budget
 *   (`manifest.policies.maxExecutionTime`, as fuel) leaves after its closure, and its tape and artifacts are bounded
 *   the same way;
 * - a step's clock starts where the latest of its direct dependencies' clocks ended (the generation's start for a
 *   root), so the times a tool reads do not depend on how many events were written before it ran.
 * @module
 */
import type { PlanStep } from "../protocol/mod.ts";
import type { StoredArtifact } from "../sandbox/mod.ts";
import type { JsonObject } from "../protocol/mod.ts";
import { applyWorkspaceDelta, mergeWorkspaceChanges } from "../sandbox/mod.ts";
import type { WorkspaceImage } from "../sandbox/mod.ts";
import type { StepJobResult } from "./step-job.ts";
import { dependencyClosures, directDependencies } from "./step-graph.ts";

type FsState = WorkspaceImage["state"];

/** The run's state a generation starts from (or a step's view). */
export type LedgerState = {
  readonly workspace: FsState;
  /** Memory entries (`key → canonical value text`). */
  readonly memory: ReadonlyMap<string, string>;
  readonly artifacts: { readonly count: number; readonly bytes: number };
  readonly fuel: bigint;
  readonly tape: { readonly records: number; readonly blobBytes: number };
};

/** What a finished step left in the ledger. */
type Done = {
  readonly view: FsState;
  /** The exact workspace state it committed, or null when it committed no workspace change (or failed). */
  readonly after: FsState | null;
  readonly memory: readonly (readonly [string, string])[];
  readonly artifacts: readonly StoredArtifact[];
  readonly fuel: bigint;
  readonly tape: { readonly records: number; readonly blobBytes: number };
  readonly clockEndMs: number;
  /** The step's output when it succeeded, else null. */
  readonly output: JsonObject | null;
};

const NO_RESULT: Omit<Done, "view" | "clockEndMs"> = { after: null, memory: [], artifacts: [], fuel: 0n, tape: { records: 0, blobBytes: 0 }, output: null };

/** Plan indices, ascending and distinct: a step's dependency closure, or the emitted steps. */
type Indices = ArrayLike<number> & Iterable<number>;

/** Whether ascending distinct indices are exactly `0..n-1` (the last one tells). */
const isPrefix = (a: Indices): boolean => a.length === 0 || a[a.length - 1] === a.length - 1;

function sameList(a: Indices, b: Indices): boolean {
  if (a.length !== b.length) return false;
  if (isPrefix(a) && isPrefix(b)) return true;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** See the module notes. */
export class Generation {
  readonly steps: PlanStep[];
  #deps: number[][];
  /** Each step's closure; a closure that is every earlier step is a view of {@link #prefix} (no copy per step). */
  #closures: Indices[];
  /** `0, 1, 2, …`, grown by doubling. */
  #prefix = new Int32Array(16).map((_, k) => k);
  /** The step ids seen so far and their indices (sessions add steps one at a time). */
  readonly #index = new Map<string, number>();
  readonly #base: LedgerState;
  readonly #config: WorkspaceImage["config"];
  readonly #clockStartMs: number;
  readonly #done: (Done | undefined)[] = [];
  /** The composition of the emitted steps: the run's state now. */
  #applied: number[] = [];
  /** The outputs of the emitted steps by step id (what a step whose closure is every emitted step reads). */
  #appliedOutputs: Record<string, JsonObject> = {};
  #current: LedgerState;

  /**
   * @param steps the plan's steps (gated)
   * @param base the run's state when the plan was made
   * @param config the workspace's confinement and limits
   * @param clockStartMs where a root step's clock starts
   */
  constructor(steps: readonly PlanStep[], base: LedgerState, config: WorkspaceImage["config"], clockStartMs: number) {
    this.steps = [...steps];
    this.#deps = directDependencies(this.steps);
    this.#closures = dependencyClosures(this.#deps).map((c, i) => (c.length === i ? this.#prefixOf(i) : c));
    for (const [i, st] of this.steps.entries()) this.#index.set(st.id, i);
    this.#base = base;
    this.#current = base;
    this.#config = config;
    this.#clockStartMs = clockStartMs;
  }

  /**
   * Append a step (a session's next call; it depends on the call before it unless it says otherwise).
   * @param step the step
   * @returns its index
   */
  add(step: PlanStep): number {
    const i = this.steps.length;
    this.steps.push(step);
    // As `directDependencies` and `dependencyClosures` would give for the whole list, for the new step only: the
    // cost of a call does not grow with the calls before it (a long MCP session).
    const deps = step.depends_on === undefined ? (i === 0 ? [] : [i - 1]) : [...new Set(step.depends_on.map((d) => this.#index.get(d) ?? -1))].filter((d) => d >= 0 && d < i).sort((a, b) => a - b);
    this.#index.set(step.id, i);
    this.#deps.push(deps);
    if (deps.length === 1 && deps[0] === i - 1 && this.#closures[i - 1]!.length === i - 1) this.#closures.push(this.#prefixOf(i));
    else {
      const all = new Set<number>();
      for (const d of deps) {
        all.add(d);
        for (const x of this.#closures[d]!) all.add(x);
      }
      const closure = [...all].sort((a, b) => a - b);
      this.#closures.push(closure.length === i ? this.#prefixOf(i) : closure);
    }
    return i;
  }

  /** The indices `0..n-1` (a view, not a copy). */
  #prefixOf(n: number): Indices {
    if (n > this.#prefix.length) {
      let size = this.#prefix.length;
      while (size < n) size *= 2;
      this.#prefix = new Int32Array(size).map((_, k) => k);
    }
    return this.#prefix.subarray(0, n);
  }

  /** The direct dependencies of step `i`. */
  depsOf(i: number): readonly number[] {
    return this.#deps[i]!;
  }

  /**
   * Whether no two steps may run at the same time: each step depends, directly or transitively, on every step before
   * it (a plan that never says `depends_on`, a session). Such a generation gains nothing from step threads.
   */
  get isChain(): boolean {
    return this.#closures.every((c, i) => c.length === i);
  }

  /** The dependency closure of step `i` (ascending plan indices). */
  closureOf(i: number): Indices {
    return this.#closures[i]!;
  }

  /** Whether step `i` has a result (success or failure). */
  isDone(i: number): boolean {
    return this.#done[i] !== undefined;
  }

  /** Whether step `i` finished with an output. */
  succeeded(i: number): boolean {
    return this.#done[i]?.output != null;
  }

  /**
   * What step `i` sees: the base with its closure's commits in plan order, the outputs it may read, and where its
   * clock starts.
   * @param i the step (its dependencies done)
   * @returns its view (`outputs` is read when the step is prepared, and may be the generation's own record)
   */
  viewOf(i: number): { state: LedgerState; image: WorkspaceImage; outputs: Readonly<Record<string, JsonObject>>; clockStartMs: number } {
    const closure = this.#closures[i]!;
    // A step that depends on every emitted step and nothing else (a chain, a session) sees the run's state now.
    const now = sameList(closure, this.#applied);
    const state = now ? this.#current : this.#compose(closure);
    // The emitted steps' outputs are kept as they are emitted: a long session's call does not copy every output.
    const outputs: Record<string, JsonObject> = now ? this.#appliedOutputs : {};
    if (!now) {
      for (const j of closure) {
        const out = this.#done[j]?.output;
        if (out != null) outputs[this.steps[j]!.id] = out;
      }
    }
    let clockStartMs = this.#clockStartMs;
    for (const d of this.#deps[i]!) clockStartMs = Math.max(clockStartMs, this.#done[d]?.clockEndMs ?? clockStartMs);
    return { state, image: { state: state.workspace, config: this.#config }, outputs, clockStartMs };
  }

  /**
   * Record what step `i` did (its job's result), on the view it ran on.
   * @param i the step
   * @param view the workspace state it ran on
   * @param result its job's result, or null when it never ran (refused before running)
   * @param clockStartMs where its clock started (for a step that never ran)
   */
  complete(i: number, view: FsState, result: StepJobResult | null, clockStartMs: number): void {
    if (result === null || result.exec.stepError !== null) {
      this.#done[i] = { ...NO_RESULT, view, clockEndMs: result?.exec.clockEndMs ?? clockStartMs, fuel: BigInt(result?.exec.fuelUsed ?? "0"), tape: { records: result?.tape.records.length ?? 0, blobBytes: blobBytes(result) } };
      return;
    }
    this.#done[i] = {
      view,
      after: result.workspace === null ? null : applyWorkspaceDelta(view, result.workspace),
      memory: result.memory,
      artifacts: result.artifacts,
      fuel: BigInt(result.exec.fuelUsed),
      tape: { records: result.tape.records.length, blobBytes: blobBytes(result) },
      clockEndMs: result.exec.clockEndMs,
      output: result.exec.toolOutput as JsonObject | null,
    };
  }

  /**
   * Step `i` was emitted: its commits join the run's state (in plan order: the emitted steps are a prefix).
   * @param i the step
   */
  emitted(i: number): void {
    this.#current = this.#apply(this.#current, this.#applied, i);
    this.#applied.push(i);
    const out = this.#done[i]?.output;
    if (out != null) this.#appliedOutputs[this.steps[i]!.id] = out;
  }

  /** The run's state after the emitted steps. */
  get current(): LedgerState {
    return this.#current;
  }

  /** The workspace image of the run's state after the emitted steps. */
  get image(): WorkspaceImage {
    return { state: this.#current.workspace, config: this.#config };
  }

  #compose(steps: Indices): LedgerState {
    let state = this.#base;
    const applied: number[] = [];
    for (const j of steps) {
      state = this.#apply(state, applied, j);
      applied.push(j);
    }
    return state;
  }

  #apply(state: LedgerState, applied: Indices, j: number): LedgerState {
    const d = this.#done[j];
    if (d === undefined) throw new Error(`internal: step ${j} is applied before it finished`);
    let workspace = state.workspace;
    if (d.after !== null) workspace = sameList(applied, this.#closures[j]!) ? d.after : mergeWorkspaceChanges(state.workspace, d.view, d.after);
    let memory = state.memory;
    if (d.memory.length > 0) {
      const m = new Map(state.memory);
      for (const [k, v] of d.memory) m.set(k, v);
      memory = m;
    }
    let bytes = 0;
    for (const a of d.artifacts) bytes += a.bytes.length;
    return {
      workspace,
      memory,
      artifacts: { count: state.artifacts.count + d.artifacts.length, bytes: state.artifacts.bytes + bytes },
      fuel: state.fuel + d.fuel,
      tape: { records: state.tape.records + d.tape.records, blobBytes: state.tape.blobBytes + d.tape.blobBytes },
    };
  }
}

function blobBytes(result: StepJobResult | null): number {
  let n = 0;
  for (const [, b] of result?.tape.blobs ?? []) n += b.length;
  return n;
}
