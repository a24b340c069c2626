/**
 * Test support (not exported from mod.ts): the escape and determinism corpus of Python payloads, run as
 * `exec_python` snippets by `escape.test.ts` (vitest) and, for the determinism part, by
 * `conformance/lib/python-cases.ts` on Node and Deno. Each payload must end contained: with the expected error code
 * (and reason), or with a result that shows it reached nothing (or only virtual, seeded values).
 * @module
 */
import type { ErrorCode } from "../../protocol/errors.ts";
import type { JsonValue } from "../../protocol/json.ts";

/** What a payload must end with. */
export type Expect = { code: ErrorCode; reason?: string; errorName?: string } | { result: JsonValue };

/** One payload. */
export type Payload = { name: string; code: string; expect: Expect; fuel?: bigint };

const HOST_NAMES = ["process", "Deno", "require", "globalThis", "eval", "Function", "fetch", "setTimeout", "console", "WebAssembly", "window", "self", "Buffer"];

/** Payloads that try to leave the sandbox or exhaust it. */
export const ESCAPE_CORPUS: Payload[] = [
  {
    name: "import js finds an empty module",
    code: `import js\nresult = [dir(js), [n for n in ${JSON.stringify(HOST_NAMES)} if hasattr(js, n)]]`,
    expect: { result: [["__class__", "__name__", "__dict__"], []] },
  },
  { name: "js.globalThis is missing", code: "import js\nx = js.globalThis", expect: { code: "EXEC_TOOL_FAILED", errorName: "AttributeError" } },
  { name: "storing into js", code: "import js\njs.leak = 1", expect: { code: "EXEC_SANDBOX_VIOLATION", reason: "js-ffi" } },
  { name: "jsffi.create_proxy", code: "import jsffi\njsffi.create_proxy(lambda: 1)", expect: { code: "EXEC_SANDBOX_VIOLATION", reason: "js-ffi" } },
  { name: "jsffi.to_js", code: "import jsffi\njsffi.to_js({'a': 1})", expect: { code: "EXEC_SANDBOX_VIOLATION", reason: "js-ffi" } },
  { name: "JsProxy.new (Reflect.construct)", code: "import _reach\n_reach.call.new()", expect: { code: "EXEC_SANDBOX_VIOLATION", reason: "js-ffi" } },
  { name: "keyword arguments to the channel", code: "import _reach\n_reach.call('log', '{}', x=1)", expect: { code: "EXEC_SANDBOX_VIOLATION", reason: "js-ffi" } },
  {
    name: "__import__('os') has no process or environment functions",
    code: "os = __import__('os')\nresult = [n for n in ('system', 'popen', 'environ', 'getenv', 'putenv', 'fork', 'execv', 'spawnv', 'kill') if hasattr(os, n)]",
    expect: { result: [] },
  },
  {
    name: "subprocess, ctypes, ffi, socket, machine are not there",
    code: "out = []\nfor m in ('subprocess', 'ctypes', 'ffi', 'socket', 'machine', 'termios', '_thread'):\n    try:\n        __import__(m)\n        out.append(m)\n    except ImportError:\n        pass\nresult = out",
    expect: { result: [] },
  },
  { name: "open('/etc/passwd')", code: "open('/etc/passwd').read()", expect: { code: "EXEC_TOOL_FAILED", errorName: "OSError" } },
  { name: "the original open behind builtins.open", code: "import builtins\ndel builtins.open\nopen('/etc/passwd')", expect: { code: "EXEC_TOOL_FAILED", errorName: "OSError" } },
  {
    name: "/proc and the rest of the file system",
    code: "import os, io\nout = []\nfor f in (lambda: io.open('/proc/self/environ'), lambda: os.listdir('/'), lambda: os.listdir('/proc'), lambda: os.stat('/etc/passwd'),\n" +
      "          lambda: os.chdir('/proc'), lambda: os.mkdir('/tmp/x'), lambda: os.remove('/x'), lambda: os.rename('/a', '/b'), lambda: os.statvfs('/')):\n" +
      "    try:\n        out.append(repr(f()))\n    except OSError as e:\n        out.append(e.args[0])\nresult = [out, os.getcwd()]",
    expect: { result: [[13, 13, 13, 2, 13, 13, 13, 13, 38], "/"] },
  },
  {
    name: "no host environment, arguments or stdin",
    code: "import sys\nresult = [sys.argv, sys.path, sys.platform, sys.stdin.read()]",
    expect: { result: [[], ["", ".frozen", "/lib"], "webassembly", ""] },
  },
  {
    name: "sys.modules and __main__ tricks break only the snippet's own result",
    code: "import sys, __main__\nsys.modules['_reach'] = None\n__main__.json = None\nresult = 1",
    expect: { code: "EXEC_TOOL_FAILED", errorName: "AttributeError" },
  },
  { name: "the raw channel is capability-checked", code: "import _reach\n_reach.call('fs.read', '{\"path\": \"secret/key\"}')", expect: { code: "POLICY_VIOLATION" } },
  {
    name: "catching a policy violation does not continue the snippet",
    code: "try:\n    reach.read_text('secret/key')\nexcept Exception:\n    pass\nresult = 'escaped'",
    expect: { code: "POLICY_VIOLATION" },
  },
  { name: "an endless loop", code: "while True:\n    pass", expect: { code: "EXEC_RESOURCE_EXHAUSTED", reason: "fuel" }, fuel: 5_000_000n },
  { name: "an endless loop inside C", code: "result = ('a' * 10**7).count('b')", expect: { code: "EXEC_RESOURCE_EXHAUSTED", reason: "fuel" }, fuel: 5_000_000n },
  { name: "a memory bomb", code: "a = []\nwhile True:\n    a.append(bytearray(10**6))", expect: { code: "EXEC_RESOURCE_EXHAUSTED", reason: "memory" } },
  { name: "one huge allocation", code: "b = bytearray(2**31 - 1)", expect: { code: "EXEC_RESOURCE_EXHAUSTED", reason: "memory" } },
  { name: "deep recursion", code: "def f(n):\n    return f(n + 1)\nf(0)", expect: { code: "EXEC_RESOURCE_EXHAUSTED", reason: "stack" } },
  { name: "repr of a deeply nested literal", code: "x = eval('[' * 5000 + ']' * 5000)\ny = repr(x)", expect: { code: "EXEC_RESOURCE_EXHAUSTED", reason: "stack" } },
  { name: "deeply nested JSON as the result", code: "import json\nresult = json.loads('[' * 100000 + ']' * 100000)", expect: { code: "EXEC_RESOURCE_EXHAUSTED", reason: "stack" } },
  { name: "uctypes writes past the memory", code: "import uctypes\nuctypes.bytearray_at(3 * 2**30, 16)[0] = 1", expect: { code: "EXEC_TOOL_FAILED", reason: "trap" } },
  { name: "uctypes overwrites the C stack", code: "import uctypes\nb = uctypes.bytearray_at(100, 65000)\nfor i in range(len(b)):\n    b[i] = 255", expect: { code: "EXEC_TOOL_FAILED", reason: "trap" } },
  {
    name: "uctypes scribbles over static data and the heap above the break",
    code: "import uctypes\nb = uctypes.bytearray_at(850000, 190000)\nfor i in range(0, len(b), 97):\n    b[i] = 7\nresult = 'scribbled'",
    expect: { result: "scribbled" },
  },
  { name: "a heap left locked", code: "import micropython\nresult = [1]\nmicropython.heap_lock()\nmicropython.heap_lock()", expect: { result: [1] } },
];

/** Payloads whose results must be virtual and seeded: the same on every run and runtime, never the host's. */
export const DETERMINISM_CORPUS: Payload[] = [
  {
    name: "time.time(), time_ns(), localtime() and datetime.now() read the virtual clock",
    code: "import time, datetime\nresult = [time.time(), time.time_ns(), list(time.localtime()), str(datetime.datetime.now()), list(time.gmtime(0))]",
    expect: { result: [1767225600, 1767225600001000000, [2026, 1, 1, 0, 0, 0, 3, 1], "2026-01-01 00:00:00.003000", [1970, 1, 1, 0, 0, 0, 3, 1]] },
  },
  { name: "time.sleep() and ticks are virtual", code: "import time\nt0 = time.ticks_ms()\ntime.sleep(60)\nresult = [t0, time.ticks_ms()]", expect: { result: [0, 60002] } },
  {
    name: "random and os.urandom come from the seeded stream",
    code: "import random, os\na = [random.random(), random.getrandbits(30), random.randint(1, 6), os.urandom(8).hex()]\nrandom.seed()\nresult = a + [random.random()]",
    // For the stub host's seed "7" and invocation "inv-1" (conformance pins the real host's values).
    expect: { result: [0.8009065518411895, 256003252, 5, "55e77649e476aa68", 0.0981719302949029] },
  },
  {
    name: "hashes and ids are not randomised",
    code: "class A:\n    pass\nresult = [hash('abc'), hash(b'abc'), hash((1, 'x')), id(A()) - id(A()), sorted({'b': 1, 'a': 2, 'c': 3})]",
    expect: { result: [12933, 12933, 144766, -16, ["a", "b", "c"]] },
  },
];
