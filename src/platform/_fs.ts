/**
 * Promise forms of the `node:fs` calls the run path makes (internal). Not `node:fs/promises`: importing it loads
 * Node's promise file system with its readline and watcher modules, ~3 ms of a short CLI run, while `node:fs` and
 * `node:util` are loaded before any user code. Same calls, same results, through the callback API.
 * @module
 */
import { close as closeCb, constants, fchmod as fchmodCb, lstat as lstatCb, mkdir as mkdirCb, open as openCb, readdir as readdirCb, readFile as readFileCb, readlink as readlinkCb, realpath as realpathCb, rm as rmCb, writeFile as writeFileCb } from "node:fs";
import process from "node:process";
import { promisify } from "node:util";

/** `fs.promises.lstat`. */
export const lstat = promisify(lstatCb);
/** `fs.promises.mkdir`. */
export const mkdir = promisify(mkdirCb);
/** `fs.promises.readFile`. */
export const readFile = promisify(readFileCb);
/** `fs.promises.readdir`. */
export const readdir = promisify(readdirCb);
/** `fs.promises.readlink`. */
export const readlink = promisify(readlinkCb);
/** `fs.promises.realpath`. */
export const realpath = promisify(realpathCb);
/** `fs.promises.rm`. */
export const rm = promisify(rmCb);

const openFd = promisify(openCb);
const closeFd = promisify(closeCb);
const writeFd = promisify(writeFileCb);
const fchmod = promisify(fchmodCb);
/** `wx` and `O_NOFOLLOW` (where the system has it): a new file, never through a link. */
const NEW_FILE = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | (constants.O_NOFOLLOW ?? 0);

/**
 * Create `path` (it must not exist, not even as a dangling link: `O_EXCL|O_NOFOLLOW`) with exactly `mode` (set on
 * the descriptor, whatever the umask), holding `bytes` (none by default).
 * @param path the new file
 * @param mode its permissions
 * @param bytes its content
 * @throws the system error (`EEXIST` when it exists)
 * @example await createExclusive("/tmp/probe", 0o600);
 */
export async function createExclusive(path: string, mode: number, bytes?: Uint8Array): Promise<void> {
  const fd = await openFd(path, NEW_FILE, mode);
  try {
    if (process.platform !== "win32") await fchmod(fd, mode);
    if (bytes !== undefined) await writeFd(fd, bytes);
  } finally {
    await closeFd(fd);
  }
}
