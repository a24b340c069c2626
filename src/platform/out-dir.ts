/**
 * Checking where a run's results go before the run starts (`--out`): a run is never wasted on a folder that cannot
 * be written, and results never land inside the pack they came from.
 * @module
 */
import { createExclusive, lstat, rm, realpath } from "./_fs.ts";
import { basename, dirname, join, relative, resolve, sep } from "node:path";
import process from "node:process";
import { ReachError } from "../protocol/mod.ts";

function inside(child: string, parent: string): boolean {
  const rel = relative(parent, child);
  return rel === "" || (!rel.startsWith("..") && !rel.startsWith(sep) && rel !== "..");
}

/** The real path `abs` names: its nearest existing ancestor with links resolved, then the rest as given. */
async function realOf(abs: string): Promise<{ real: string; existing: string }> {
  let existing = abs;
  while ((await lstat(existing).catch(() => null)) === null && dirname(existing) !== existing) existing = dirname(existing);
  return { real: join(await realpath(existing).catch(() => existing), relative(existing, abs)), existing };
}

/**
 * Refuse a file written from a pack directory into that directory (`pack build DIR --out DIR/x.pack.tar.gz`, or the
 * default name while in DIR): it would become part of the pack, change its digest and break its signature, and the
 * next archive would hold this one.
 * @param out the file to write
 * @param packPath the pack directory (an archive has no inside: nothing to check)
 * @param option how the message names the option (`--out`)
 * @throws ReachError `PROTO_INVALID_ARGUMENT` when `out` is inside the pack directory
 * @example await refuseInsidePack("packs/hello/hello.pack.tar.gz", "packs/hello", "--out"); // throws
 */
export async function refuseInsidePack(out: string, packPath: string, option: string): Promise<void> {
  const pack = await realpath(resolve(packPath)).catch(() => resolve(packPath));
  if ((await lstat(pack).catch(() => null))?.isDirectory() !== true) return;
  if (!inside((await realOf(resolve(out))).real, pack)) return;
  throw new ReachError("PROTO_INVALID_ARGUMENT", `${option} ${JSON.stringify(out)} is inside the pack ${JSON.stringify(packPath)}; it would become part of the pack (changing its digest) — write it elsewhere, e.g. ${option} ../${basename(out)}`);
}

/**
 * Make sure `out` can take a run's results: a directory (or a path whose nearest existing parent is one), writable (a
 * probe file is written there and removed), and not inside the pack directory. Nothing is created: the results'
 * writer creates the folder.
 * @param out the `--out` path
 * @param packPath the pack directory or archive
 * @returns the absolute output directory
 * @throws ReachError `PROTO_INVALID_ARGUMENT` naming the problem and how to fix it
 * @example
 * ```ts
 * const out: string = await prepareOutDir(".reach", "packs/hello"); // refuses an unwritable --out before any work
 * ```
 */
export async function prepareOutDir(out: string, packPath: string): Promise<string> {
  const abs = resolve(out);
  const pack = await realpath(resolve(packPath)).catch(() => resolve(packPath));
  const st = await lstat(abs).catch(() => null);
  if (st !== null && !st.isDirectory()) throw new ReachError("PROTO_INVALID_ARGUMENT", `--out ${JSON.stringify(out)} exists and is not a directory; give a directory for the results`);
  const { real, existing } = await realOf(abs);
  if ((await lstat(existing).catch(() => null))?.isDirectory() !== true) {
    throw new ReachError("PROTO_INVALID_ARGUMENT", `--out ${JSON.stringify(out)} cannot be created: ${JSON.stringify(existing)} is not a directory; choose a writable directory`);
  }
  if ((await lstat(pack).catch(() => null))?.isDirectory() === true && inside(real, pack)) {
    throw new ReachError("PROTO_INVALID_ARGUMENT", `--out ${JSON.stringify(out)} is inside the pack ${JSON.stringify(packPath)}; results would change the pack (and its digest) — write them elsewhere`);
  }
  const probe = join(existing, `.reach-write-probe-${process.pid}`);
  try {
    await createExclusive(probe, 0o600);
    await rm(probe, { force: true });
  } catch (err) {
    throw new ReachError("PROTO_INVALID_ARGUMENT", `--out ${JSON.stringify(out)} is not writable (${(err as { code?: string }).code ?? (err as Error).message} in ${JSON.stringify(existing)}); choose a directory you can write`, { cause: err });
  }
  return abs;
}
