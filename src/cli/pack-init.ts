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
import { bad } from "./pack-args.ts";
import type { PackOpts } from "./pack-args.ts";

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
 * @param o parsed arguments (`--template`, `--json`)
 * @param io output streams
 * @returns 0
 * @throws ReachError `PROTO_INVALID_ARGUMENT` for a missing or non-empty directory or an unknown template
 * @example await packInit({ positional: ["hello-c"], flags: new Map([["--template", "c"]]) }, io);
 */
export async function packInit(o: PackOpts, io: CliIO): Promise<number> {
  const [dir, extra] = o.positional;
  if (dir === undefined) throw bad("init needs a directory");
  if (extra !== undefined) throw bad(`init takes one directory, got also ${JSON.stringify(extra)}`);
  const template = (o.flags.get("--template") as string | undefined) ?? "js";
  if (!isTemplateName(template)) throw bad(`unknown template ${JSON.stringify(template)}; choose one of ${TEMPLATES.join(", ")}`);
  const existing = await readdir(dir).catch(() => null);
  if (existing !== null && existing.length > 0) throw bad(`${JSON.stringify(dir)} is not empty; give a new or empty directory`);
  const id = (basename(resolve(dir)) || "my-pack").replace(/[^a-zA-Z0-9._-]/g, "-").slice(0, 100);
  const files = await templateFiles(template, id);
  const executable = new Set([...files].filter(([, f]) => f.executable).map(([p]) => p));
  await writeDirAtomic(dir, new Map([...files].map(([p, f]) => [p, f.bytes])), { executable }); // 0644, scripts 0755
  io.stderr(
    `reach-wasm: created pack ${id} in ${dir} (template ${template}: ${[...files.keys()].filter((p) => p.startsWith("tools/")).join(", ")})\n` +
      `  rebuild the tool: ${dir}/build.sh   (needs ${BUILD_NEEDS[template]}; see reach-wasm doctor)\n` +
      `  then: reach-wasm pack validate ${dir} && reach-wasm pack test ${dir}   (docs/authoring.md)\n`,
  );
  if (o.flags.has("--json")) io.stdout(JSON.stringify({ dir, id, template, files: [...files.keys()] }) + "\n");
  return 0;
}
