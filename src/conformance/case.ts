/**
 * One conformance case: an id, its category, the clause of seed 003 it checks, and how to run it against the suite's
 * shared context.
 * @module
 */
import type { SuiteContext } from "./context.ts";
import type { Category } from "./types.ts";

/** One conformance case. */
export type ConformanceCase = {
  /** Stable id, `<category>.<name>`. */
  id: string;
  category: Category;
  /** The clause it checks, e.g. "§3.3 eventHash". */
  clause: string;
  /** What it checks, in a line. */
  title: string;
  /** Resolves when the implementation conforms; throws an `Error` whose message says what was wrong. */
  run(ctx: SuiteContext): Promise<void>;
};

