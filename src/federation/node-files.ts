/**
 * The one way a node reaches its directory (`--dir DIR`, `state.ts`): file access the CLI supplies, so that federation
 * itself stays web-standard.
 * @module
 */

/** File access rooted at the node directory (supplied by the CLI; paths are relative and `/`-separated). */
export type NodeFiles = {
  /** The file's bytes, or null when it does not exist. */
  read(path: string, maxBytes: number): Promise<Uint8Array | null>;
  /** Write atomically with `mode` (default 0644), creating parent directories. */
  write(path: string, bytes: Uint8Array, mode?: number): Promise<void>;
  /** File names inside a directory, sorted; [] when it does not exist. */
  list(dir: string): Promise<string[]>;
  /** Delete a file; false when it did not exist. */
  remove(path: string): Promise<boolean>;
};
