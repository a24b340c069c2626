/**
 * Reading a secret's value from a file (`--secret NAME=file:PATH`), the way secret files are read by sandboxes that
 * keep secrets out of their guests: opened without following a symbolic link (`O_NOFOLLOW`), a regular file only,
 * bounded in size, one trailing newline (`\n` or `\r\n`) stripped, UTF-8. Messages name the file, never its content.
 * @module
 */
import { closeSync, constants, fstatSync, openSync, readSync } from "node:fs";
import { ReachError } from "../protocol/mod.ts";

/** Largest secret file read, in bytes (the host refuses longer values anyway). */
export const MAX_SECRET_FILE_BYTES = 64 * 1024;

function refuse(what: string, message: string, reason: string): ReachError {
  return new ReachError("PROTO_INVALID_ARGUMENT", `${what}: ${message}`, { details: { reason } });
}

/**
 * Read a secret value from a file.
 * @param path the file
 * @param what how messages name it (e.g. `--secret API_TOKEN=file:…`)
 * @returns the value (one trailing newline stripped)
 * @throws ReachError `PROTO_INVALID_ARGUMENT` for a link, a missing or unreadable file, not a regular file, over
 *   {@link MAX_SECRET_FILE_BYTES}, or not UTF-8
 * @example const token = readSecretFile("/run/secrets/api_token", "--secret API_TOKEN");
 */
export function readSecretFile(path: string, what: string): string {
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0));
  } catch (err) {
    const code = (err as { code?: string }).code;
    if (code === "ELOOP" || code === "EMLINK") throw refuse(what, `${JSON.stringify(path)} is a symbolic link; give the file itself`, "link");
    throw refuse(what, `cannot open ${JSON.stringify(path)} (${code ?? "error"})`, "unreadable");
  }
  try {
    const st = fstatSync(fd);
    if (!st.isFile()) throw refuse(what, `${JSON.stringify(path)} is not a regular file`, "not a file");
    if (st.size > MAX_SECRET_FILE_BYTES) throw refuse(what, `${JSON.stringify(path)} is over ${MAX_SECRET_FILE_BYTES} bytes`, "too large");
    const buf = new Uint8Array(MAX_SECRET_FILE_BYTES + 1);
    let n = 0;
    for (;;) {
      const got = readSync(fd, buf, n, buf.length - n, null);
      if (got === 0) break;
      n += got;
      if (n > MAX_SECRET_FILE_BYTES) throw refuse(what, `${JSON.stringify(path)} is over ${MAX_SECRET_FILE_BYTES} bytes`, "too large");
    }
    let text: string;
    try {
      text = new TextDecoder("utf-8", { fatal: true }).decode(buf.subarray(0, n));
    } catch {
      throw refuse(what, `${JSON.stringify(path)} is not UTF-8 text`, "not UTF-8");
    }
    return text.endsWith("\r\n") ? text.slice(0, -2) : text.endsWith("\n") ? text.slice(0, -1) : text;
  } finally {
    closeSync(fd);
  }
}
