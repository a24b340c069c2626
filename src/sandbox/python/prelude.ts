/**
 * The Python side of the runner: the prelude, executed once on every fresh interpreter before its memory is
 * snapshotted (so every invocation starts with it in place), and the one-line driver each invocation executes.
 *
 * The prelude defines the `reach` object (the host API, README.md "The reach object"), makes `os.urandom` read the
 * invocation's seeded stream through the host, and replaces `open` with one that explains there are no files (the
 * file syscalls refuse anyway). `_run()` asks the host for the job (`_reach.begin()`), runs it, and hands the
 * JSON text of its result back (`_reach.finish(text)`); an exception propagates out of the interpreter with its
 * traceback. Frames of the prelude and driver report the file `<stdin>`; `outcome.ts` drops them from tracebacks.
 * @module
 */

/** File name the tool kind's module is compiled under (it appears in tracebacks). */
export const TOOL_FILE = "tool.py";
/** File name an `exec_python` snippet is compiled under. */
export const SNIPPET_FILE = "<exec_python>";

/** The prelude's source (MicroPython 1.27). */
export const PRELUDE_SOURCE = String.raw`
import sys, json, os, builtins, binascii, micropython, gc
import _reach as _host

class ReachError(Exception):
    def __init__(self, code, message):
        super().__init__("%s: %s" % (code, message))
        self.code = code
        self.message = message

def _call(op, request):
    reply = _host.call(op, json.dumps(request))
    if reply is None:
        raise MemoryError("no memory for the host's reply")
    envelope = json.loads(reply)
    if envelope["ok"]:
        return envelope["value"]
    raise ReachError(envelope["code"], envelope["message"])

def _body(content):
    if isinstance(content, str):
        return {"text": content}
    return {"data": binascii.b2a_base64(bytes(content)).decode().strip()}

def _bytes(reply):
    return binascii.a2b_base64(reply["data"].encode())

class Reach:
    ReachError = ReachError
    def call(self, op, request=None):
        return _call(op, {} if request is None else request)
    def read_bytes(self, path):
        return _bytes(_call("fs.read", {"path": path}))
    def read_text(self, path):
        return str(self.read_bytes(path), "utf-8")
    def write_text(self, path, text):
        return _call("fs.write", {"path": path, "text": text})["size"]
    def write_bytes(self, path, data):
        request = _body(data)
        request["path"] = path
        return _call("fs.write", request)["size"]
    def list_dir(self, path="."):
        return _call("fs.list", {"path": path})["entries"]
    def stat(self, path):
        return _call("fs.stat", {"path": path})
    def remove(self, path, recursive=False):
        _call("fs.remove", {"path": path, "recursive": True} if recursive else {"path": path})
    def memory_get(self, key, default=None):
        reply = _call("memory.get", {"key": key})
        return reply["value"] if reply["found"] else default
    def memory_set(self, key, value):
        _call("memory.set", {"key": key, "value": value})
    def write_temp(self, name, content):
        request = _body(content)
        request["name"] = name
        return _call("temp.write", request)["path"]
    def read_lines(self, path, start=0, count=100):
        return _call("lines.read", {"path": path, "start": start, "count": count})
    def log(self, *parts, level="info"):
        text = " ".join([p if isinstance(p, str) else json.dumps(p) for p in parts])
        _call("log", {"level": level, "message": text})
    def emit_artifact(self, name, mime_type, content):
        request = _body(content)
        request["name"] = name
        request["mimeType"] = mime_type
        return _call("artifact.emit", request)
    def now(self):
        return _call("clock.now", {})
    def random_bytes(self, n):
        return _bytes(_call("random.bytes", {"n": n}))

reach = Reach()

def _urandom(n):
    if not isinstance(n, int) or n < 0:
        raise ValueError("negative argument not allowed")
    out = b""
    while n > 0:
        k = min(n, 65536)
        out += reach.random_bytes(k)
        n -= k
    return out

def _no_open(*args, **kwargs):
    raise OSError(13, "there are no files in the sandbox; use reach.read_text(path) and reach.write_text(path, text)")

os.urandom = _urandom
builtins.open = _no_open

# No collection is ever useful inside an invocation: this build collects only when control returns to the host, and
# the memory is restored from the snapshot afterwards anyway. Collect the prelude's garbage once (when this returns)
# and stop the allocator from scheduling collections.
gc.collect()
gc.disable()

def _unlock_heap():
    # Undo any micropython.heap_lock() of the guest, without allocating (the heap may be locked).
    micropython.heap_lock()
    depth = micropython.heap_unlock()
    while depth > 0:
        depth = micropython.heap_unlock()

def _run():
    # The job: its kind, its input as JSON and its code, on the first two lines and the rest (JSON has no raw newline).
    job = _host.begin()
    i = job.find("\n")
    j = job.find("\n", i + 1)
    value = json.loads(job[i + 1:j])
    code = job[j + 1:]
    if job[:i] == "tool":
        scope = {"__name__": "tool"}
        exec(compile(code, "${TOOL_FILE}", "exec"), scope)
        main = scope.get("main")
        if not callable(main):
            raise TypeError("tool.py must define a function main(input, reach)")
        result = main(value, reach)
    else:
        scope = {"__name__": "__main__", "input": value, "reach": reach}
        exec(compile(code, "${SNIPPET_FILE}", "exec"), scope)
        result = scope.get("result")
    _unlock_heap()
    try:
        text = json.dumps(result)
    except (TypeError, ValueError) as e:
        raise TypeError("the result is not JSON-serialisable: %s" % e)
    _host.finish(text)
`;

/** Where a level adds methods to the `Reach` class of {@link PRELUDE_SOURCE} (after its last method). */
const REACH_LAST_METHOD = `    def random_bytes(self, n):\n        return _bytes(_call("random.bytes", {"n": n}))\n`;

let preludeV2: string | undefined;

/**
 * The prelude of a sandbox API level (`SandboxApiLevel`, sandbox/types.ts). Level 1 is {@link PRELUDE_SOURCE} byte
 * for byte (the interpreter's snapshot, and with it the fuel of every run recorded at level 1, depends on it); level 2
 * adds `reach.secret(name)` → the placeholder `{{secret:NAME}}` of a secret the pack declares (host op
 * `secret.placeholder`; a malformed or undeclared name raises the host's `PROTO_INVALID_ARGUMENT` as `ReachError`).
 * @param level the run's level
 * @returns the prelude's source
 * @example preludeSource(2).includes("def secret(self, name):") // true
 */
export function preludeSource(level: 1 | 2): string {
  if (level === 1) return PRELUDE_SOURCE;
  if (preludeV2 !== undefined) return preludeV2;
  const at = PRELUDE_SOURCE.indexOf(REACH_LAST_METHOD);
  if (at < 0) throw new Error("the prelude's Reach class moved; update REACH_LAST_METHOD");
  const end = at + REACH_LAST_METHOD.length;
  const method = `    def secret(self, name):\n        return _call("secret.placeholder", {"name": name})["placeholder"]\n`;
  return (preludeV2 = PRELUDE_SOURCE.slice(0, end) + method + PRELUDE_SOURCE.slice(end));
}

/** What each invocation executes (after the prelude, in the same `__main__`). */
export const DRIVER_SOURCE = "_run()\n";
