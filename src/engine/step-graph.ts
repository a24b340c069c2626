/**
 * The dependency graph of a plan's steps: what each step waits for, and so what state it sees and what it may read.
 *
 * - A step with `depends_on` depends on exactly the steps it names (all earlier in the plan: the plan gate checks
 *   it); `depends_on: []` makes it a root.
 * - A step without `depends_on` depends on the step before it (none for the first), so a plan that never says
 *   `depends_on` runs as a chain, one step after another, exactly as before steps could run in parallel.
 *
 * The closure of a step is every step it depends on, directly or transitively. A step sees the workspace, the memory
 * store, the artifacts and the fuel of the commits of its closure applied in plan order, on top of what the run had
 * when the plan was made; it may take (`{"$step"}`, `arguments.ts`) the output of any step in its closure.
 * @module
 */
import type { PlanStep } from "../protocol/mod.ts";

/**
 * The steps each step depends on directly, as plan indices (ascending).
 * @param steps the plan's steps (ids unique, `depends_on` naming earlier steps: the gate's rules)
 * @returns `deps[i]`: the indices step `i` waits for
 * @example directDependencies([{ id: "a" }, { id: "b" }] as PlanStep[]) // [[], [0]]
 */
export function directDependencies(steps: readonly Pick<PlanStep, "id" | "depends_on">[]): number[][] {
  const index = new Map<string, number>();
  return steps.map((s, i) => {
    const deps = s.depends_on === undefined ? (i === 0 ? [] : [i - 1]) : [...new Set(s.depends_on.map((d) => index.get(d) ?? -1))].filter((d) => d >= 0 && d < i).sort((a, b) => a - b);
    index.set(s.id, i);
    return deps;
  });
}

/**
 * Each step's closure: every step it depends on, directly or transitively, as plan indices (ascending).
 * @param deps from {@link directDependencies}
 * @returns `closure[i]`, ascending
 * @example dependencyClosures([[], [0], [1]]) // [[], [0], [0, 1]]
 */
export function dependencyClosures(deps: readonly (readonly number[])[]): number[][] {
  const sets: Set<number>[] = [];
  for (const [i, direct] of deps.entries()) {
    const all = new Set<number>();
    for (const d of direct) {
      if (d >= i) continue;
      all.add(d);
      for (const x of sets[d]!) all.add(x);
    }
    sets.push(all);
  }
  return sets.map((s) => [...s].sort((a, b) => a - b));
}
