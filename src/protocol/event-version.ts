/**
 * The event format version, apart from the event schemas (`event.ts`): the ledger stamps every event with it, and a
 * run that only writes events need not build the schemas that read them.
 * @module
 */

/** The event format version (upstream `specVersion` const). */
export const EVENT_SPEC_VERSION = "1.0.0";
