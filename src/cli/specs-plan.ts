/**
 * The declaration of `reach-wasm plan` (its subcommand `validate`): its arguments, parsed by `options.ts`, and its
 * help, written by `help.ts`.
 * @module
 */
import { defineArgs } from "./options.ts";

/** `reach-wasm plan validate FILE`. */
export const PLAN_VALIDATE = defineArgs({
  name: "plan validate",
  summary: "apply seed 001's plan rules (§3 fields, §4 structural, risk, scope, delegation) to a plan file one by\none, and say which tasks reach-wasm can execute (exit 0 valid, 1 a rule failed, 2 unreadable)",
  positionals: ["<PLAN_FILE>"],
  options: {
    executable: { type: "boolean", help: "also fail (exit 1) when a task is one reach-wasm cannot execute (PLAN_TASK_NOT_EXECUTABLE)" },
    json: { type: "boolean", help: "print one JSON object on stdout: {valid, executable, file, planId, planSha256, rules, tasks}" },
  },
});
export const PLAN_SUBCOMMANDS = [PLAN_VALIDATE] as const;
