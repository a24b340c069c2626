/**
 * JSON values as the protocol carries them: a run's input and output, a tool's arguments and answer, a host call's
 * request and response (seed 003 §3.3: what is hashed is their RFC 8785 canonical form).
 * @module
 */

/** A JSON value. */
export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };
/** A JSON object. */
export type JsonObject = { [key: string]: JsonValue };
