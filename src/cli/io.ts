/**
 * Where the CLI writes: the entry point passes the process streams, tests pass buffers.
 * @module
 */

/** The CLI's output streams. */
export type CliIO = { stdout(text: string): void; stderr(text: string): void };
