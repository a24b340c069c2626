/**
 * `reach-wasm plan validate FILE [--executable] [--json]`: seed 001's plan rules applied one by one to a plan file
 * (`src/engine/plan-rules.ts`), the counterpart of seed 001's `rgpt-plan-validate` (§8). Prints each rule with its
 * section and verdict, the plan's SHA-256 (of the file's bytes, seed 001 §6), and each task reach-wasm cannot execute
 * with `PLAN_TASK_NOT_EXECUTABLE` and why. Exit 0 valid, 1 a rule failed (or, with `--executable`, a task cannot
 * execute), 2 the file cannot be read as JSON.
 * @module
 */
import { validatePlanFile } from "../engine/mod.ts";
import { readHostFile } from "../platform/files.ts";
import type { CliIO } from "./io.ts";
import { findCommand } from "./commands.ts";
import { parseCommand, subcommandOf } from "./options.ts";
import { PLAN_SUBCOMMANDS, PLAN_VALIDATE } from "./specs-plan.ts";

async function validate(argv: readonly string[], io: CliIO): Promise<number> {
  const { values, positionals } = parseCommand(PLAN_VALIDATE, argv);
  const file = positionals[0]!;
  const v = validatePlanFile(await readHostFile(file, 4 * 1024 * 1024), file);
  const failed = v.rules.filter((r) => !r.ok);
  const refused = v.tasks.filter((t) => !t.executable);
  const ok = failed.length === 0 && (values.executable !== true || v.executable);
  if (values.json) io.stdout(JSON.stringify({ valid: v.valid, executable: v.executable, file, planId: v.planId, planSha256: v.planSha256, rules: v.rules, tasks: v.tasks }) + "\n");
  if (io.quiet !== true || !ok) {
    for (const r of v.rules) io.stderr(`reach-wasm: ${r.ok ? "ok  " : "FAIL"} ${r.rule} (${r.section}): ${r.message}\n`);
    for (const t of refused) io.stderr(`reach-wasm: task ${t.taskId}: ${t.code}: ${t.message}\n`);
  }
  const what = `plan ${v.planId === null ? file : JSON.stringify(v.planId)} (sha256 ${v.planSha256})`;
  if (failed.length > 0) io.stderr(`reach-wasm: ${what} is invalid: ${failed.map((r) => `${r.rule} (${r.section})`).join(", ")} failed\n`);
  else if (refused.length > 0) io.stderr(`reach-wasm: ${what} is valid by seed 001 §4; reach-wasm cannot execute ${refused.length === v.tasks.length ? "any of its tasks" : `task${refused.length === 1 ? "" : "s"} ${refused.map((t) => t.taskId).join(", ")}`} (PLAN_TASK_NOT_EXECUTABLE)${values.executable === true ? "" : "; --executable makes that a failure"}\n`);
  else io.stderr(`reach-wasm: ${what} is valid; every task executes\n`);
  return ok ? 0 : 1;
}

/**
 * The `plan` command.
 * @param argv arguments after `plan`
 * @param io output streams
 * @returns the exit code
 */
export async function runPlanCommand(argv: readonly string[], io: CliIO): Promise<number> {
  const { argv: rest } = subcommandOf(findCommand("plan")!, PLAN_SUBCOMMANDS, argv);
  return validate(rest, io);
}
