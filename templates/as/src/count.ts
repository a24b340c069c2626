// count — a reach-wasm tool in AssemblyScript, compiled to a WASI preview1 command with nothing but `asc`
// (no wasi-shim package: the few WASI functions it needs are declared below).
//
// The tool ABI of kind "wasm": the input arrives as JSON on stdin, the output is JSON on stdout, exit code 0 means
// success (anything else fails the step with EXEC_TOOL_FAILED), stderr is the tool's log. The host API is the
// optional import module "reach" (docs/authoring.md, "wasm"): here one `log` call.
//
// Input {"text": "..."} -> output {"words": N}: N is the number of runs of characters other than space, tab,
// newline and carriage return in "text" (JSON escapes \n \t \r count as those).

@external("wasi_snapshot_preview1", "fd_read")
declare function fd_read(fd: u32, iovs: usize, iovsLen: usize, nread: usize): u16;
@external("wasi_snapshot_preview1", "fd_write")
declare function fd_write(fd: u32, iovs: usize, iovsLen: usize, nwritten: usize): u16;
@external("wasi_snapshot_preview1", "proc_exit")
declare function proc_exit(code: u32): void;
@external("reach", "call")
declare function reach_call(op: usize, opLen: i32, req: usize, reqLen: i32, resp: usize, cap: i32, lenOut: usize): i32;

const iov = memory.data(16);
const count = memory.data(8);

function write(fd: u32, text: string): void {
  const bytes = String.UTF8.encode(text);
  store<u32>(iov, changetype<usize>(bytes));
  store<u32>(iov, bytes.byteLength, 4);
  fd_write(fd, iov, 1, count);
}

function readStdin(): Uint8Array {
  let buf = new Uint8Array(4096);
  let used = 0;
  while (true) {
    if (used == buf.length) {
      const bigger = new Uint8Array(buf.length * 2);
      bigger.set(buf);
      buf = bigger;
    }
    store<u32>(iov, buf.dataStart + used);
    store<u32>(iov, buf.length - used, 4);
    if (fd_read(0, iov, 1, count) != 0) break;
    const n = load<u32>(count);
    if (n == 0) break;
    used += n;
  }
  return buf.subarray(0, used);
}

/** Call a host operation; returns the status (0 OK, 1 buffer too small, 2 invalid, 3 unknown op, 4 error). */
function host(op: string, request: string): i32 {
  const o = String.UTF8.encode(op);
  const r = String.UTF8.encode(request);
  const response = new Uint8Array(256);
  return reach_call(changetype<usize>(o), o.byteLength, changetype<usize>(r), r.byteLength, response.dataStart, response.length, count);
}

function isSpace(c: u8): bool {
  return c == 0x20 || c == 0x09 || c == 0x0a || c == 0x0d;
}

/** The words of the string value of "text", counted as it is scanned; -1 when there is no string "text". */
function countWords(json: Uint8Array): i64 {
  const key = String.UTF8.encode('"text"');
  const k = Uint8Array.wrap(key);
  let at = -1;
  for (let i = 0; i + k.length <= json.length && at < 0; i++) {
    let same = true;
    for (let j = 0; j < k.length; j++) if (json[i + j] != k[j]) { same = false; break; }
    if (same) at = i;
  }
  if (at < 0) return -1;
  let i = at + k.length;
  while (i < json.length && (isSpace(json[i]) || json[i] == 0x3a)) i++;
  if (i >= json.length || json[i] != 0x22) return -1;
  let words: i64 = 0;
  let inWord = false;
  for (i++; i < json.length && json[i] != 0x22; i++) {
    let space = isSpace(json[i]);
    if (json[i] == 0x5c && i + 1 < json.length) {
      i++;
      space = json[i] == 0x6e || json[i] == 0x74 || json[i] == 0x72; // \n \t \r
    }
    if (!space && !inWord) words++;
    inWord = !space;
  }
  return words;
}

/** Called on a failed assertion or a runtime error (`--use abort=src/count/abort`): a message on stderr, exit 1. */
function abort(message: string | null, file: string | null, line: u32, column: u32): void {
  write(2, "abort: " + (message === null ? "" : message) + "\n");
  proc_exit(1);
}

const words = countWords(readStdin());
if (words < 0) {
  write(2, 'count: the input has no string "text"\n');
  proc_exit(1);
} else {
  host("log", '{"level":"info","message":"counted ' + words.toString() + ' words"}');
  write(1, '{"words":' + words.toString() + "}\n");
}
