/**
 * `pack validate`'s source check: every JavaScript module of a pack (the planner and each `js` tool) compiles in
 * the QuickJS engine the run would use, so a syntax error is reported with its line and column before any run.
 * @module
 */
import { ReachError } from "../protocol/mod.ts";
import { moduleSyntaxErrors } from "../sandbox/mod.ts";
import type { LoadedPack } from "./pack.ts";
import type { EngineEnvironment } from "./runners.ts";

/**
 * Compile the pack's JavaScript modules without running them.
 * @param env the environment (its `quickjsEngine`)
 * @param loaded the loaded pack
 * @returns nothing when every module compiles
 * @throws ReachError `PACK_MALFORMED` naming each file, line and column with a syntax error
 * @example
 * ```ts
 * declare const env: EngineEnvironment;
 * declare const loaded: LoadedPack;
 * await checkPackSources(env, loaded); // throws PACK_MALFORMED "planner.js:3:10: SyntaxError: …"
 * ```
 */
export async function checkPackSources(env: Pick<EngineEnvironment, "quickjsEngine">, loaded: LoadedPack): Promise<void> {
  const dec = new TextDecoder();
  const modules: { path: string; source: string }[] = [];
  if (loaded.entrypoint.kind === "planner") modules.push({ path: loaded.entrypoint.path, source: dec.decode(loaded.entrypoint.source) });
  for (const tool of loaded.tools.values()) {
    if (tool.definition.kind === "js") modules.push({ path: tool.definition.module ?? tool.name, source: dec.decode(tool.code) });
  }
  const problems = await moduleSyntaxErrors(env.quickjsEngine, modules);
  if (problems.length === 0) return;
  const where = problems.map((p) => `${p.path}:${p.line}:${p.column}: SyntaxError: ${p.message}`);
  throw new ReachError("PACK_MALFORMED", `${where.join("; ")}; fix the syntax (tools and planners are ES2023 modules run by QuickJS)`, {
    details: { syntaxErrors: problems.map((p) => ({ ...p })) },
  });
}
