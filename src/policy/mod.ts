/**
 * Capability decisions (seed 003 §4): host allowlists for `http.fetch`, and which host ops, workspace roots,
 * memory keys and URLs a pack may use (`capabilities.ts`).
 * @module
 */
export { checkRedirect, checkUrlAllowed, parseHostPattern, policyViolationForHost } from "./hosts.ts";
export type { HostCheck, HostPattern } from "./hosts.ts";
export {
  capabilityPolicy,
  checkFetchUrl,
  checkFsTarget,
  checkMemoryKey,
  checkOp,
  requiredPermission,
  workspaceResources,
} from "./capabilities.ts";
export type { CapabilityOptions, CapabilityPolicy, MemoryGrant, OpName, UrlGrant, WorkspaceRootResource } from "./capabilities.ts";
export { auditCapabilities, changedPaths } from "./audit.ts";
export type { CapabilityAudit } from "./audit.ts";
