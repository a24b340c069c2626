/**
 * The virtual workspace: normalised, confined paths and an in-memory file system with per-step staging
 * (seed 003 §4.2, §4.3).
 * @module
 */
export {
  MAX_PATH_BYTES,
  MAX_PATH_DEPTH,
  MAX_SEGMENT_BYTES,
  ancestorPaths,
  displayPath,
  isWithin,
  normalizeWorkspacePath,
  parentPath,
  pathViolation,
  splitWorkspacePath,
} from "./path.ts";
export type { NormalizeOptions, SplitOptions } from "./path.ts";
export {
  DEFAULT_MAX_ENTRIES,
  DEFAULT_MAX_FILE_BYTES,
  DEFAULT_MAX_TOTAL_BYTES,
  MAX_LINK_EXPANSIONS,
  StepTransaction,
  TEMP_ROOT,
  Workspace,
  WorkspaceError,
  WorkspaceView,
  applyWorkspaceDelta,
  mergeWorkspaceChanges,
  snapshotDigest,
  workspaceDelta,
} from "./workspace.ts";
export type {
  RemoveOptions,
  ResolveOptions,
  ResolvedPath,
  SnapshotEntry,
  WorkspaceAccess,
  WorkspaceEntry,
  WorkspaceEntryType,
  WorkspaceErrno,
  WorkspaceLstat,
  WorkspaceOptions,
  WorkspaceResource,
  WorkspaceStat,
  WorkspaceDelta,
  WorkspaceImage,
} from "./workspace.ts";
