/**
 * The workspace's access checks (seed 003 §4.2 "Resource Boundaries", "Permission Checks"), made on resolved
 * paths: whatever links a path went through, the entry it names decides.
 * @module
 */
import { policyViolation } from "../../protocol/mod.ts";
import type { ReachError } from "../../protocol/mod.ts";
import { displayPath, isWithin, pathViolation } from "./path.ts";
import type { Config } from "./_state.ts";

/**
 * Check the root's access for a resolved `path`.
 * @param config the workspace's mounts (null: unconfined)
 * @param op the operation, for the error
 * @param path the resolved path
 * @param want the access needed; `"lookup"` only asks that the path be inside a root (or a directory above one)
 * @returns nothing
 * @throws ReachError `RESOURCE_ACCESS` outside every root; `PERMISSION_DENIED` when the root does not grant `want`
 * @example authorize(config, "fs.write", "data/a.txt", "write")
 */
export function authorize(config: Config, op: string, path: string, want: "read" | "write" | "lookup"): void {
  const mounts = config.mounts;
  if (mounts === null) return;
  const mount = mounts.find((m) => isWithin(path, m.root)); // mounts are sorted longest root first
  if (mount === undefined) {
    if (want !== "write" && mounts.some((m) => isWithin(m.root, path))) return; // a directory above a root
    throw pathViolation(op, path, "the path is outside every declared resource root");
  }
  const granted = want === "lookup" || mount.access === "readwrite" || mount.access === want;
  if (!granted) {
    const shown = displayPath(path);
    throw policyViolation(
      "PERMISSION_DENIED",
      `${op}:${shown}`,
      `${op} refused path ${JSON.stringify(shown)}: the resource root "${mount.root}" is "${mount.access}" only; ` +
        `declare it with "${want === "write" ? "write" : "read"}" permission in reach.json if the tool needs it`,
      { path: shown, root: mount.root, access: mount.access, reason: `${want} access not granted` },
    );
  }
}

/**
 * Refuse removing or replacing the workspace root, a declared root, or a directory holding one.
 * @param config the mounts
 * @param op the operation
 * @param path the resolved path about to disappear
 * @returns nothing
 * @throws ReachError `PERMISSION_DENIED`
 * @example protectRoots(config, "fs.remove", "temp") // throws: a root
 */
export function protectRoots(config: Config, op: string, path: string): void {
  const mounts = config.mounts;
  if (path === "" || (mounts !== null && mounts.some((m) => isWithin(m.root, path)))) {
    throw rootError(op, path);
  }
}

function rootError(op: string, path: string): ReachError {
  const shown = displayPath(path);
  return policyViolation(
    "PERMISSION_DENIED",
    `${op}:${shown}`,
    `${op} refused path ${JSON.stringify(shown)}: the workspace root and declared resource roots cannot be ` +
      `removed, moved or replaced; change the entries inside instead`,
    { path: shown, reason: "root" },
  );
}
