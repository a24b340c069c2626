/**
 * Running the suite (seed 003 §10): the black-box cases of the chosen categories against the implementation's CLI,
 * then (for this installation) the in-process cases, one at a time, each verdict reported as it lands. The report
 * holds no timings and no host paths, so the same implementation gets the same bytes on Node and on Deno.
 * @module
 */
import { federationCases } from "./cases-federation.ts";
import { determinismCases } from "./cases-determinism.ts";
import { policyCases } from "./cases-policy.ts";
import { replayCases } from "./cases-replay.ts";
import { schemaCases } from "./cases-schema.ts";
import { SuiteContext } from "./context.ts";
import { CATEGORIES } from "./types.ts";
import type { CaseResult, Category, CategoryResult, ConformanceHost, ConformanceReport } from "./types.ts";
import type { ConformanceCase } from "./case.ts";

/** Every black-box case, category by category, in the order they run. */
export function blackBoxCases(): ConformanceCase[] {
  return [...schemaCases(), ...determinismCases(), ...replayCases(), ...policyCases(), ...federationCases()];
}

/** How to run the suite. */
export type ConformanceOptions = {
  host: ConformanceHost;
  /** The categories to run (default all five), in any order; they run in §10's order. */
  categories?: readonly Category[];
  /** Cases run in this process after the black-box ones of their category (none for another implementation). */
  inProcess?: readonly ConformanceCase[];
  /** How the report names the implementation. */
  implementation: string;
  /** Told of each case as it starts and ends (progress on stderr). */
  onCase?: (event: { index: number; total: number; case: ConformanceCase; result?: CaseResult }) => void;
};

/**
 * Run the suite.
 * @param options the host, the categories, the in-process cases and a progress callback
 * @returns the report; `passed` only when every case passed
 * @example const report = await runConformance({ host, implementation: "reach-wasm (this installation)" });
 */
export async function runConformance(options: ConformanceOptions): Promise<ConformanceReport> {
  const wanted = new Set(options.categories ?? CATEGORIES);
  const categories = CATEGORIES.filter((c) => wanted.has(c));
  const inProcess = options.inProcess ?? [];
  const cases = categories.flatMap((cat) => [...blackBoxCases(), ...inProcess].filter((c) => c.category === cat));
  const ctx = new SuiteContext(options.host, await options.host.scratchDir());
  const results: CaseResult[] = [];
  try {
    for (const [index, c] of cases.entries()) {
      options.onCase?.({ index, total: cases.length, case: c });
      const result = await runCase(ctx, c);
      results.push(result);
      options.onCase?.({ index, total: cases.length, case: c, result });
    }
  } finally {
    await ctx.close();
    await options.host.cleanup();
  }
  return report(options.implementation, categories, results);
}

async function runCase(ctx: SuiteContext, c: ConformanceCase): Promise<CaseResult> {
  const base = { id: c.id, category: c.category, clause: c.clause, title: c.title };
  try {
    await c.run(ctx);
    return { ...base, status: "passed" };
  } catch (err) {
    const text = err instanceof Error ? err.message : String(err);
    return { ...base, status: "failed", message: ctx.sanitize(text).slice(0, 2000) };
  }
}

function report(implementation: string, categories: readonly Category[], results: readonly CaseResult[]): ConformanceReport {
  const perCategory: CategoryResult[] = categories.map((category) => {
    const cases = results.filter((r) => r.category === category);
    const failed = cases.filter((r) => r.status === "failed").length;
    return { category, passed: cases.length - failed, failed, cases };
  });
  const failed = results.filter((r) => r.status === "failed").length;
  return {
    specVersion: "1.0.0",
    implementation,
    passed: failed === 0 && results.length > 0,
    summary: { total: results.length, passed: results.length - failed, failed },
    categories: perCategory,
  };
}

const XML_ESCAPES: Readonly<Record<string, string>> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&apos;" };

function xml(text: string): string {
  // XML 1.0 has no place for most control characters; they become U+FFFD
  // eslint-disable-next-line no-control-regex -- replacing control characters is the point
  return text.replace(/[\u0000-\u0008\u000b\u000c\u000e-\u001f]/g, "\ufffd").replace(/[&<>"']/g, (c) => XML_ESCAPES[c]!);
}

/**
 * The report as JUnit XML: one `<testsuite>` per category, one `<testcase>` per case (its clause in the name), a
 * `<failure>` with the message for each failed case.
 * @param r the report
 * @returns the XML document
 * @example await writeFile("conformance.xml", junitXml(report));
 */
export function junitXml(r: ConformanceReport): string {
  const lines = ['<?xml version="1.0" encoding="UTF-8"?>', `<testsuites name="reach-wasm conformance (seed 003 §10): ${xml(r.implementation)}" tests="${r.summary.total}" failures="${r.summary.failed}">`];
  for (const cat of r.categories) {
    lines.push(`  <testsuite name="${cat.category}" tests="${cat.cases.length}" failures="${cat.failed}">`);
    for (const c of cat.cases) {
      const open = `    <testcase classname="conformance.${c.category}" name="${xml(`${c.id} [${c.clause}] ${c.title}`)}"`;
      if (c.status === "passed") lines.push(`${open}/>`);
      else lines.push(`${open}>`, `      <failure message="${xml(c.message ?? "failed")}"/>`, "    </testcase>");
    }
    lines.push("  </testsuite>");
  }
  lines.push("</testsuites>");
  return lines.join("\n") + "\n";
}
