/**
 * The revision of the protocol schemas: a digest of the sources of `src/protocol/` and of zod's version, written by
 * `node scripts/gen-schema-revision.mjs` (a test fails when it is out of date). Part of every key of the
 * validated-document cache (`src/engine/document-cache.ts`).
 * @module
 */

/** 16 hex digits; changes whenever a schema may validate differently. */
export const SCHEMA_REVISION = "c0327a176280d99d";
