/**
 * Capability decisions (seed 003 §4): host allowlists for `http.fetch`.
 * @module
 */
export { checkRedirect, checkUrlAllowed, parseHostPattern, policyViolationForHost } from "./hosts.ts";
export type { HostCheck, HostPattern } from "./hosts.ts";
