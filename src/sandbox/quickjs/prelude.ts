/**
 * The JavaScript that prepares a fresh QuickJS context before the tool's module is evaluated (see README.md):
 * builds the frozen `reach` object over two host functions, replaces `Date` and `Math.random` with their virtual,
 * seeded versions, adds `console`, and deletes every global not on `GLOBAL_ALLOWLIST`.
 *
 * Only strings cross the boundary: each host function takes `(op, requestJson)` and returns (or resolves to) a JSON
 * envelope `{"ok":true,"value":…}` or `{"ok":false,"code":…,"message":…}`; errors the tool sees are made here,
 * inside the sandbox, so no host object or host stack ever reaches it. Bytes travel as arrays of numbers
 * (`bytes`); the bridge converts them to and from the host API's base64 `data` (and adds UTF-8 `text` for
 * `fs.read` and `http.fetch`), which keeps this prelude — parsed once per invocation — small.
 * @module
 */

/**
 * The global names a tool can see (own properties of `globalThis` after setup). Everything else the engine
 * defines is deleted: `WeakRef`, `FinalizationRegistry` (GC-dependent), `SharedArrayBuffer` (no threads here),
 * `InternalError` (QuickJS-specific).
 */
export const GLOBAL_ALLOWLIST: readonly string[] = Object.freeze([
  "AggregateError", "Array", "ArrayBuffer", "BigInt", "BigInt64Array", "BigUint64Array", "Boolean", "DataView",
  "Date", "Error", "EvalError", "Float16Array", "Float32Array", "Float64Array", "Function", "Infinity",
  "Int16Array", "Int32Array", "Int8Array", "Iterator", "JSON", "Map", "Math", "NaN", "Number", "Object", "Promise",
  "Proxy", "RangeError", "ReferenceError", "Reflect", "RegExp", "Set", "String", "Symbol", "SyntaxError",
  "TypeError", "URIError", "Uint16Array", "Uint32Array", "Uint8Array", "Uint8ClampedArray", "WeakMap", "WeakSet",
  "console", "decodeURI", "decodeURIComponent", "encodeURI", "encodeURIComponent", "escape", "eval", "globalThis",
  "isFinite", "isNaN", "parseFloat", "parseInt", "reach", "undefined", "unescape",
]);

/**
 * Global script; evaluates to `setup(callSync, callAsync, allowlistJson, source)` (called once, before the tool's
 * module is evaluated, so the built-ins it captures are the engine's own), which returns
 * `run(namespace, inputJson) → Promise<outputJson>` and `describe(error) → string`.
 *
 * QuickJS has no lazy parsing and parses at ≈1 µs a token, so this script holds only what every invocation needs:
 * the `sync` bridge, `console` / `reach.log`, `reach.clock`, `reach.random`, the virtual `Date`, the global
 * lockdown and `run`. The other `reach` functions and `describe` live in {@link API_SOURCE},
 * and the body of the seeded `Math.random` in {@link RANDOM_SOURCE}; the frozen `reach` object and `Math.random`
 * hold small stubs (same names and lengths) that compile them, with the `eval` captured here before the tool runs,
 * the first time one of them is called; `source(name)` is a host function returning `API_SOURCE` ("api") or
 * `RANDOM_SOURCE` ("random"), so their text crosses into the engine only when needed.
 */
export const PRELUDE_SOURCE = String.raw`(function setup(callSync, callAsync, allowlistJson, source) {
  "use strict";
  const G = globalThis;
  const { freeze, defineProperty, getOwnPropertyNames, getOwnPropertySymbols, hasOwn } = Object;
  const parse = JSON.parse, stringify = JSON.stringify;
  const RealDate = G.Date, RealError = G.Error, RealPromise = G.Promise, U8 = G.Uint8Array, realEval = G.eval;
  const apply = Reflect.apply, construct = Reflect.construct, arrayFrom = Array.from;
  function fail(envelope) {
    const err = new RealError(typeof envelope.message === "string" ? envelope.message : "host call failed");
    err.code = typeof envelope.code === "string" ? envelope.code : "EXEC_TOOL_FAILED";
    return err;
  }
  function sync(op, request) {
    const envelope = parse(callSync(op, stringify(request)));
    if (envelope.ok !== true) throw fail(envelope);
    return envelope.value;
  }
  function log(level) {
    return (...parts) => { sync("log", { level, message: parts.map((p) => typeof p === "string" ? p : stringify(p) ?? String(p)).join(" ") }); };
  }
  let api;
  const load = () => api ??= realEval(source("api"))(sync, callAsync, fail, freeze, parse, stringify, U8, arrayFrom, RealError);
  function lazy(ns, names) {
    const o = {};
    for (let i = 0; i < names.length; i += 2) {
      const name = names[i];
      o[name] = defineProperty({ [name]: (...args) => apply(load()[ns][name], undefined, args) }[name], "length", { value: names[i + 1] });
    }
    return freeze(o);
  }

  const logInfo = log("info");
  const now = () => sync("clock.now", {}).ms;
  const reach = freeze({
    fs: lazy("fs", ["read", 1, "readBytes", 1, "write", 2, "list", 0, "stat", 1, "remove", 1]),
    http: lazy("http", ["fetch", 1]),
    memory: lazy("memory", ["get", 1, "set", 2]),
    temp: lazy("temp", ["write", 2]),
    lines: lazy("lines", ["read", 1]),
    log: freeze(Object.assign(logInfo, { debug: log("debug"), info: logInfo, warn: log("warn"), error: log("error") })),
    artifact: lazy("artifact", ["emit", 3]),
    clock: freeze({ now: () => sync("clock.now", {}).ms }),
    random: freeze({ bytes: (n) => new U8(sync("random.bytes", { n }).bytes) }),
  });

  // Virtual Date: no arguments reads the invocation's virtual clock (one host clock.now per read).
  function Date(...args) {
    if (new.target === undefined) return new RealDate(now()).toString();
    return construct(RealDate, args.length === 0 ? [now()] : args, new.target);
  }
  defineProperty(Date, "prototype", { value: RealDate.prototype });
  defineProperty(RealDate.prototype, "constructor", { value: Date, writable: true, configurable: true });
  Date.now = now;
  Date.parse = RealDate.parse;
  Date.UTC = RealDate.UTC;

  // Seeded Math.random (RANDOM_SOURCE, compiled on the first call): the invocation's random.bytes stream.
  let seeded;
  defineProperty(Math, "random", { writable: true, configurable: true, value: function random() {
    return (seeded ??= realEval(source("random"))(reach.random.bytes, U8))();
  } });

  const console = freeze({ log: logInfo, info: logInfo, debug: log("debug"), warn: log("warn"), error: log("error") });
  const globals = { reach, Date, console };
  for (const name of getOwnPropertyNames(globals)) {
    defineProperty(G, name, { value: globals[name], writable: name !== "reach", enumerable: false, configurable: name !== "reach" });
  }
  const allowed = parse(allowlistJson);
  for (const name of getOwnPropertyNames(G)) if (!hasOwn(allowed, name)) delete G[name];
  for (const sym of getOwnPropertySymbols(G)) delete G[sym];

  function run(ns, inputJson) {
    const input = parse(inputJson);
    return new RealPromise((resolve) => resolve(ns)).then((mod) => {
      const main = mod.default;
      if (typeof main !== "function") throw new TypeError("the tool module must export a default function (input, reach) => output");
      return apply(main, undefined, [input, reach]);
    }).then((out) => {
      const text = stringify(out);
      if (typeof text !== "string") throw new TypeError("the tool returned " + typeof out + ", which is not JSON; return a JSON value");
      return text;
    });
  }
  return freeze({ run, describe: (e) => load().describe(e) });
})`;

/** Where a level adds members to the frozen `reach` object of {@link PRELUDE_SOURCE} (its last member). */
const REACH_LAST_MEMBER = `    random: freeze({ bytes: (n) => new U8(sync("random.bytes", { n }).bytes) }),\n`;

/**
 * The prelude of a sandbox API level (`SandboxApiLevel`, sandbox/types.ts). Level 1 is {@link PRELUDE_SOURCE} byte
 * for byte (its bytes are part of the fuel of every run recorded at level 1); level 2 adds
 * `reach.secret(name)` → the placeholder `{{secret:NAME}}` of a secret the pack declares (host op
 * `secret.placeholder`; a malformed or undeclared name throws the host's `PROTO_INVALID_ARGUMENT`).
 * @param level the run's level
 * @returns the prelude's source
 * @example preludeSource(2).includes("secret.placeholder") // true
 */
export function preludeSource(level: 1 | 2): string {
  if (level === 1) return PRELUDE_SOURCE;
  return preludeV2 ??= addMember(PRELUDE_SOURCE, `    secret: (name) => sync("secret.placeholder", { name }).placeholder,\n`);
}
let preludeV2: string | undefined;

function addMember(source: string, member: string): string {
  const at = source.indexOf(REACH_LAST_MEMBER);
  if (at < 0 || source.indexOf(REACH_LAST_MEMBER, at + 1) >= 0) throw new Error("the prelude's reach object moved; update REACH_LAST_MEMBER");
  const end = at + REACH_LAST_MEMBER.length;
  return source.slice(0, end) + member + source.slice(end);
}

/**
 * Global script (evaluated inside the sandbox by the prelude, at most once per invocation, on the first call of
 * `Math.random`); evaluates to a factory that takes `reach.random.bytes` and the real `Uint8Array` and returns the
 * seeded generator: 8 bytes of the invocation's random stream per number, `(u64be >> 11) / 2^53`.
 */
export const RANDOM_SOURCE = String.raw`(function (bytes, U8) {
"use strict";
let pool = new U8(0), at = 0;
return function random() {
  if (at + 8 > pool.length) { pool = bytes(256); at = 0; }
  const hi = ((pool[at] << 24) | (pool[at + 1] << 16) | (pool[at + 2] << 8) | pool[at + 3]) >>> 0;
  const lo = ((pool[at + 4] << 24) | (pool[at + 5] << 16) | (pool[at + 6] << 8) | pool[at + 7]) >>> 0;
  at += 8;
  return (hi * 2097152 + (lo >>> 11)) / 9007199254740992;
};
})`;

/**
 * Global script (evaluated inside the sandbox by the prelude, at most once per invocation, on the first call of a
 * lazily built `reach` function or of `describe`); evaluates to a factory that takes the prelude's captured
 * helpers and returns the implementations behind the `reach.fs`, `http`, `memory`, `temp`, `lines` and
 * `artifact` stubs, and `describe(error) → string`. It reads no global the tool could have replaced before it
 * runs (everything it needs at build time is passed in).
 */
export const API_SOURCE = String.raw`(function (sync, callAsync, fail, freeze, parse, stringify, U8, arrayFrom, RealError) {
"use strict";
function async(op, request) {
  return callAsync(op, stringify(request)).then((text) => {
    const envelope = parse(text);
    if (envelope.ok !== true) throw fail(envelope);
    return envelope.value;
  });
}
function body(data, name) {
  if (typeof data === "string") return { text: data };
  if (data instanceof U8) return { bytes: arrayFrom(data) };
  throw new TypeError(name + " expected a string or a Uint8Array");
}
function str(value, name) {
  if (typeof value !== "string") throw new TypeError(name + " expected a string");
  return value;
}
function response(r) {
  const text = r.text;
  return freeze({ status: r.status, url: r.url, headers: freeze(r.headers), body: new U8(r.bytes),
    text: () => text, json: () => parse(text) });
}
function describe(e) {
  if (e instanceof RealError || (typeof e === "object" && e !== null)) {
    const name = typeof e.name === "string" ? e.name : "Error";
    const message = typeof e.message === "string" ? e.message : "";
    const stack = typeof e.stack === "string" && e.stack !== "" ? e.stack.slice(0, 4000) : null;
    return stringify({ name: name.slice(0, 200), message: message.slice(0, 2000), code: typeof e.code === "string" ? e.code.slice(0, 100) : null, stack });
  }
  return stringify({ name: "thrown value", message: String(e).slice(0, 2000), code: null });
}
return {
  fs: {
    read: (path) => sync("fs.read", { path: str(path, "fs.read: path") }).text,
    readBytes: (path) => new U8(sync("fs.read", { path: str(path, "fs.readBytes: path") }).bytes),
    write: (path, data) => sync("fs.write", { path: str(path, "fs.write: path"), ...body(data, "fs.write: data") }).size,
    list: (path = ".") => sync("fs.list", { path: str(path, "fs.list: path") }).entries,
    stat: (path) => sync("fs.stat", { path: str(path, "fs.stat: path") }),
    remove: (path, options = {}) => { sync("fs.remove", { path: str(path, "fs.remove: path"), recursive: options.recursive === true }); },
  },
  http: {
    fetch: (url, init = {}) => {
      const request = { url: str(url, "http.fetch: url") };
      if (init.method !== undefined) request.method = str(init.method, "http.fetch: method");
      if (init.headers !== undefined) request.headers = parse(stringify(init.headers));
      if (init.body !== undefined) Object.assign(request, body(init.body, "http.fetch: body"));
      return async("http.fetch", request).then(response);
    },
  },
  memory: {
    get: (key) => { const r = sync("memory.get", { key: str(key, "memory.get: key") }); return r.found ? r.value : undefined; },
    set: (key, value) => { sync("memory.set", { key: str(key, "memory.set: key"), value: parse(stringify(value ?? null)) }); },
  },
  temp: { write: (name, data) => sync("temp.write", { name: str(name, "temp.write: name"), ...body(data, "temp.write: data") }).path },
  lines: { read: (path, start = 0, count = 100) => sync("lines.read", { path: str(path, "lines.read: path"), start, count }) },
  artifact: { emit: (name, mimeType, data) =>
    freeze(sync("artifact.emit", { name: str(name, "artifact.emit: name"), mimeType: str(mimeType, "artifact.emit: mimeType"), ...body(data, "artifact.emit: data") })) },
  describe,
};
})`;
