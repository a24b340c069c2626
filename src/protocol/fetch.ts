/**
 * The web-standard `fetch` as the engine and the faces take it: a tool's `http.fetch` goes through the one a host
 * hands in (the runtime's, or none), never through a global the engine picks itself.
 * @module
 */

/** The web-standard `fetch` signature the host needs. */
export type FetchLike = (input: string, init: RequestInit) => Promise<Response>;
