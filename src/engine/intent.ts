/**
 * The router (seed 004 "Intent Classification", "Plan Validation"): where a run's query comes from, which of the
 * pack's intents it is, and whether a plan can satisfy a generation intent.
 *
 * - **The query** is the run input's `query` when the input is an object with a string `query`; the input itself when
 *   it is a string; else the pack's `run.query`; else `""`.
 * - **Classification** is deterministic: the query is split into words (NFKC, lowercase, runs of Unicode letters and
 *   digits); the first intent in the pack's order whose `match` holds is the run's intent (none: null). A keyword is a
 *   word or a phrase of consecutive words.
 * - **Plan validation**: for an intent with `artifacts` (a generation intent), some step of the plan must use a tool
 *   whose `generates` includes a matching MIME type (`image/*` matches every image type), else the plan is refused
 *   with `PLANNING_ERROR` — `reason` `no_generator` when no step uses a generator tool at all, `artifact_mismatch` when
 *   the generators in the plan make other types.
 * @module
 */
import { ReachError } from "../protocol/mod.ts";
import type { Intent, Pack } from "../protocol/mod.ts";
import type { PlanStep } from "../protocol/mod.ts";
import type { JsonValue } from "../protocol/mod.ts";

/** The intent a run was classified as (recorded in `run.started`). */
export type RunIntent = { name: string; artifacts: string[] };

/**
 * The run's query (see the module notes).
 * @param input the run input
 * @param pack the pack
 * @returns the query text
 * @example queryOf({ query: "crea un pdf" }, pack) // "crea un pdf"
 */
export function queryOf(input: JsonValue, pack: Pick<Pack, "run">): string {
  if (typeof input === "string") return input;
  if (input !== null && typeof input === "object" && !Array.isArray(input) && typeof input["query"] === "string") return input["query"];
  return pack.run?.query ?? "";
}

/**
 * The words of a text: NFKC, lowercase, runs of Unicode letters, marks and digits.
 * @param text the text
 * @returns its words in order
 * @example queryWords("Crea un GRÁFICO, ¡ya!") // ["crea", "un", "gráfico", "ya"]
 */
export function queryWords(text: string): string[] {
  return text.normalize("NFKC").toLowerCase().match(/[\p{L}\p{M}\p{N}]+/gu) ?? [];
}

function has(words: readonly string[], keyword: string): boolean {
  const k = queryWords(keyword);
  if (k.length === 0) return false;
  for (let i = 0; i + k.length <= words.length; i++) if (k.every((w, j) => words[i + j] === w)) return true;
  return false;
}

/**
 * Classify a query: the first of the intents whose rules match.
 * @param intents the pack's intents, in order
 * @param query the query
 * @returns the intent, or null when none matches (or the pack declares none)
 * @example classifyIntent([{ name: "pdf_generate", match: { any: ["pdf"] }, artifacts: ["application/pdf"] }], "crea un pdf") // { name: "pdf_generate", artifacts: ["application/pdf"] }
 */
export function classifyIntent(intents: readonly Intent[] | undefined, query: string): RunIntent | null {
  if (intents === undefined || intents.length === 0) return null; // (compiling the word pattern costs ~0.7 ms)
  const words = queryWords(query.slice(0, 4096));
  for (const intent of intents ?? []) {
    const m = intent.match;
    if (m.any !== undefined && !m.any.some((k) => has(words, k))) continue;
    if (m.all !== undefined && !m.all.every((k) => has(words, k))) continue;
    if ((m.none ?? []).some((k) => has(words, k))) continue;
    return { name: intent.name, artifacts: [...(intent.artifacts ?? [])] };
  }
  return null;
}

/** Whether a tool's MIME type satisfies an intent's (exact, or `type/*`). */
function satisfies(wanted: string, made: string): boolean {
  return wanted === made || (wanted.endsWith("/*") && made.startsWith(wanted.slice(0, -1)));
}

/**
 * Refuse a plan that cannot satisfy a generation intent (seed 004 "Plan Validation").
 * @param steps what the plan executes (already gated otherwise)
 * @param intent the run's intent, or null
 * @param generates the MIME types each tool generates, by tool name
 * @throws ReachError `PLANNING_ERROR` (details `intent`, `artifacts`, `reason`, `generators`)
 * @example checkIntentPlan(plan.steps, { name: "chart", artifacts: ["image/svg+xml"] }, new Map([["chart", ["image/svg+xml"]]]))
 */
export function checkIntentPlan(steps: readonly Pick<PlanStep, "tool">[], intent: RunIntent | null, generates: ReadonlyMap<string, readonly string[]>): void {
  if (intent === null || intent.artifacts.length === 0) return;
  const used = [...new Set(steps.map((s) => s.tool))].filter((t) => (generates.get(t) ?? []).length > 0);
  if (used.some((t) => generates.get(t)!.some((m) => intent.artifacts.some((a) => satisfies(a, m))))) return;
  const able = [...generates].filter(([, ms]) => ms.some((m) => intent.artifacts.some((a) => satisfies(a, m)))).map(([t]) => t).sort();
  const reason = used.length === 0 ? "no_generator" : "artifact_mismatch";
  const what = used.length === 0 ? "no step uses a generator tool" : `its generator tools (${used.join(", ")}) make ${[...new Set(used.flatMap((t) => generates.get(t)!))].join(", ")}`;
  const fix = able.length === 0 ? "the pack has no tool that generates it: declare one with tools[name].generates" : `add a step that uses ${able.join(" or ")}`;
  throw new ReachError("PLANNING_ERROR", `the query asks for ${intent.name} (${intent.artifacts.join(", ")}), but ${what}; ${fix} (seed 004 plan validation)`, {
    details: { intent: intent.name, artifacts: intent.artifacts, reason, generators: able },
  });
}
