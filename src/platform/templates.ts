/**
 * The pack templates of `reach-wasm pack init --template NAME`: folders under `templates/` at the package root (one
 * per tool language), read from the installed package (Node: `dist/…`; Deno: `src/…`). Each holds `reach.json`,
 * `plan.json`, the tool (source, and a prebuilt binary for compiled languages), `build.sh` and `tests/*.json`;
 * `__PACK_ID__` in `reach.json` and `plan.json` becomes the new pack's id.
 * @module
 */
import { stat } from "node:fs/promises";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { ReachError } from "../protocol/mod.ts";
import { readDirTree } from "./files.ts";

/** The template names, in the order `--help` lists them. */
export const TEMPLATES = ["js", "python", "c", "rust", "as", "wat", "component"] as const;
/** A template name. */
export type TemplateName = (typeof TEMPLATES)[number];

/** The placeholder for the pack id in a template's `reach.json` and `plan.json`. */
export const PACK_ID_PLACEHOLDER = "__PACK_ID__";

let root: Promise<string> | undefined;

/** The `templates/` folder: the nearest one above this module that holds the `js` template. */
function templatesRoot(): Promise<string> {
  return (root ??= (async () => {
    let dir = dirname(fileURLToPath(import.meta.url));
    for (;;) {
      const candidate = join(dir, "templates");
      if (await stat(join(candidate, "js", "reach.json")).then((s) => s.isFile(), () => false)) return candidate;
      const up = dirname(dir);
      if (up === dir) throw new ReachError("EXEC_RESOURCE_UNAVAILABLE", "the pack templates are not installed (no templates/ folder in the reach-wasm package); reinstall reach-wasm");
      dir = up;
    }
  })().catch((err: unknown) => {
    root = undefined;
    throw err;
  }));
}

/**
 * True when `name` is a template name.
 * @param name a candidate
 * @returns whether it is one of {@link TEMPLATES}
 * @example isTemplateName("c") // true
 */
export function isTemplateName(name: string): name is TemplateName {
  return (TEMPLATES as readonly string[]).includes(name);
}

/**
 * A template's files, with the pack id filled in.
 * @param name the template
 * @param packId the new pack's id (`[A-Za-z0-9._-]+`)
 * @returns relative `/` path → bytes and whether the file is executable (`*.sh`)
 * @throws ReachError `PROTO_INVALID_ARGUMENT` for an unknown template or a bad id; `EXEC_RESOURCE_UNAVAILABLE`
 *   when the templates are not installed
 * @example const files = await templateFiles("c", "hello-c");
 */
export async function templateFiles(name: string, packId: string): Promise<Map<string, { bytes: Uint8Array; executable: boolean }>> {
  if (!isTemplateName(name)) throw new ReachError("PROTO_INVALID_ARGUMENT", `unknown template ${JSON.stringify(name)}; choose one of ${TEMPLATES.join(", ")}`);
  if (!/^[A-Za-z0-9._-]{1,100}$/.test(packId)) throw new ReachError("PROTO_INVALID_ARGUMENT", `pack id ${JSON.stringify(packId)} must be 1-100 of A-Z a-z 0-9 . _ -`);
  const tree = await readDirTree(join(await templatesRoot(), name), { maxTotalBytes: 8 * 1024 * 1024 });
  const out = new Map<string, { bytes: Uint8Array; executable: boolean }>();
  for (const [path, bytes] of tree.files) {
    let content = bytes;
    if (path === "reach.json" || path === "plan.json") {
      content = new TextEncoder().encode(new TextDecoder().decode(bytes).split(PACK_ID_PLACEHOLDER).join(packId));
    }
    out.set(path, { bytes: content, executable: path.endsWith(".sh") });
  }
  return out;
}
