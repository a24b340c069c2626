/**
 * `reach-wasm pack init <dir> [--template NAME] [--json]`: a new pack from a template (`templates/<NAME>/`, read
 * by `src/platform/templates.ts`): one tool in that language, its source, a prebuilt tool for compiled languages,
 * `build.sh` (offline; `reach-wasm doctor` says which toolchains are present) and test cases in `tests/`.
 * The directory must be new or empty; it is written as a whole or not at all.
 * @module
 */
import { readdir } from "node:fs/promises";
import { basename, resolve } from "node:path";
import { writeDirAtomic } from "../platform/write.ts";
import { isTemplateName, TEMPLATES, templateFiles } from "../platform/templates.ts";
import type { CliIO } from "./io.ts";
import { parseCommand, usageError } from "./options.ts";
import { PACK_INIT } from "./specs-pack.ts";

/** What each template needs to rebuild its tool (the prebuilt one runs without it). */
const BUILD_NEEDS: Readonly<Record<string, string>> = {
  js: "nothing (the tool is JavaScript source)",
  python: "nothing (the tool is Python source)",
  c: "clang, lld, wasi-libc",
  rust: "rustc with the wasm32-wasi target",
  as: "the AssemblyScript compiler (asc)",
  wat: "binaryen's wasm-as (shipped with reach-wasm)",
  component: "clang and jco (jco ships with reach-wasm)",
};

/**
 * The `pack init` subcommand.
 * @param argv the arguments after `pack init`
 * @param io output streams
 * @returns 0
 * @throws ReachError `PROTO_INVALID_ARGUMENT` for a missing or non-empty directory or an unknown template
 * @example await packInit(["hello-c", "--template", "c"], io);
 */
export async function packInit(argv: readonly string[], io: CliIO): Promise<number> {
  const { values, positionals } = parseCommand(PACK_INIT, argv);
  const dir = positionals[0]!;
  const template = values.template ?? "js";
  if (!isTemplateName(template)) throw usageError(PACK_INIT, `unknown template ${JSON.stringify(template)}; choose one of ${TEMPLATES.join(", ")}`);
  const existing = await readdir(dir).catch(() => null);
  if (existing !== null && existing.length > 0) throw usageError(PACK_INIT, `${JSON.stringify(dir)} is not empty; give a new or empty directory`);
  // the folder's name with each run of other characters as one "-", none at either end (an id, and the start of the
  // archive's file name, that begins with "-" reads as an option to every shell tool)
  const id = basename(resolve(dir)).replace(/[^a-zA-Z0-9._-]+/g, "-").replace(/^[-.]+|[-.]+$/g, "").slice(0, 100) || "my-pack";
  const files = await templateFiles(template, id);
  const executable = new Set([...files].filter(([, f]) => f.executable).map(([p]) => p));
  await writeDirAtomic(dir, new Map([...files].map(([p, f]) => [p, f.bytes])), { executable }); // 0644, scripts 0755
  io.stderr(
    `reach-wasm: created pack ${id} in ${dir} (template ${template}: ${[...files.keys()].filter((p) => p.startsWith("tools/")).join(", ")})\n` +
      `  rebuild the tool: ${dir}/build.sh   (needs ${BUILD_NEEDS[template]}; see reach-wasm doctor)\n` +
      `  then: reach-wasm pack validate ${dir} && reach-wasm pack test ${dir}   (docs/authoring.md)\n`,
  );
  if (values.json) io.stdout(JSON.stringify({ dir, id, template, files: [...files.keys()] }) + "\n");
  return 0;
}
