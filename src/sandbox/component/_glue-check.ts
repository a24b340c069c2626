/**
 * What jco's glue may touch, checked before it is ever evaluated. The glue is JavaScript that runs in our realm, so
 * it is parsed (acorn) and walked with its scopes resolved, and refused unless:
 * - it is one ES module whose only statement besides directives is `export function instantiate(getCoreModule,
 *   imports, instantiateCore = …)`: no `import` declarations, no `import()`, no other exports;
 * - `imports` is only ever read as `imports['<interface>']` with a literal name, never redeclared, passed on or
 *   enumerated, and every such name is one the runner supplies (`reach:tool/host` and `WASI_P2_INTERFACES`);
 * - every identifier it does not declare itself is a global of {@link GLUE_GLOBALS} (what the glue of the two example
 *   components uses) or one of {@link GLUE_UNBOUND} (names jco's templates mention without defining; they are bound
 *   to `undefined` when the glue is evaluated, so they never reach a real global);
 * - it never names `constructor`, `__proto__` or the legacy accessor helpers as a property (the way from any
 *   function to `Function`, i.e. to code from strings).
 * See `README.md` ("Any component").
 * @module
 */
import { parse } from "acorn";
import { ReachError } from "../../protocol/mod.ts";

/**
 * The globals the glue may read: ECMAScript built-ins and the few web APIs jco's templates name. `fetch` and the
 * timers are named by code paths a `reach:tool/tool` component never takes (loading core modules by URL,
 * component-model async); they are bound to functions that throw when the glue is evaluated, and `console` to a
 * silent one (`_glue-eval.ts`).
 */
export const GLUE_GLOBALS: ReadonlySet<string> = new Set([
  "Array", "ArrayBuffer", "BigInt", "BigInt64Array", "BigUint64Array", "Boolean", "DataView", "Error", "Float32Array",
  "Float64Array", "Infinity", "JSON", "Int16Array", "Int32Array", "Int8Array", "Map", "Math", "NaN", "Number", "Object",
  "Promise", "RangeError", "Reflect", "Set", "String", "Symbol", "TypeError", "Uint16Array", "Uint32Array",
  "Uint8Array", "WeakMap", "WeakSet", "isNaN", "undefined",
  "TextDecoder", "TextEncoder", "URL", "WebAssembly",
  "console", "fetch", "setTimeout", "setInterval", "clearInterval",
]);

/** Names jco 1.17's templates use without declaring them (dead or broken paths); bound to `undefined`. */
export const GLUE_UNBOUND: ReadonlySet<string> = new Set([
  "ASYNC_EVENT_CODE", "AsyncSubtask", "Awaitable", "InternalStream", "STREAMS", "Task", "_driverLoop",
  "_liftFlatU32", "_lowerFlatVariant", "memory", "params", "rep", "size", "variantMetas",
]);

/** Property names that lead from a value to `Function` or to prototype surgery. */
const FORBIDDEN_PROPERTIES = new Set(["constructor", "__proto__", "__defineGetter__", "__defineSetter__", "__lookupGetter__", "__lookupSetter__"]);

/** What the check found in an accepted glue. */
export type GlueFacts = {
  /** The interfaces read from `imports`, sorted. */
  importNames: string[];
  /** The globals it reads (a subset of {@link GLUE_GLOBALS} and {@link GLUE_UNBOUND}), sorted. */
  globals: string[];
  /** Source ranges of `import.meta` (only in jco's fallback for a missing `getCoreModule`). */
  importMeta: Array<[number, number]>;
  /** Source range of the `export` keyword before `function instantiate`. */
  exportKeyword: [number, number];
};

type AnyNode = { type: string; start: number; end: number; [key: string]: unknown };
type Scope = { parent: Scope | null; names: Set<string>; fn: boolean };

const isNode = (v: unknown): v is AnyNode => typeof v === "object" && v !== null && typeof (v as AnyNode).type === "string";
const n = (v: unknown): AnyNode | null => (isNode(v) ? v : null);
const list = (v: unknown): AnyNode[] => (Array.isArray(v) ? v.filter(isNode) : []);

function refuse(reason: string, details: Record<string, unknown> = {}): ReachError {
  return new ReachError("EXEC_SANDBOX_VIOLATION", `the component's jco glue ${reason}; reach-wasm runs only glue whose every import and global it supplies`, {
    details: { reason: "glue", ...details },
    recoverable: false,
  });
}

/** jco's `(async () => {}).constructor`, used only for `instanceof` checks of host functions. */
function isAsyncProbe(object: AnyNode | null, property: AnyNode): boolean {
  const body = n(object?.["body"]);
  return property["name"] === "constructor" && object?.type === "ArrowFunctionExpression" && object["async"] === true &&
    list(object["params"]).length === 0 && body?.type === "BlockStatement" && list(body["body"]).length === 0;
}

/** Walks one program: declarations per scope, references with the scope they were made in. */
class Walker {
  readonly refs: Array<{ name: string; scope: Scope }> = [];
  readonly importNames = new Set<string>();
  readonly importMeta: Array<[number, number]> = [];

  scope(parent: Scope | null, fn: boolean): Scope {
    return { parent, names: new Set(), fn };
  }

  declare(name: string, scope: Scope): void {
    if (name === "imports") throw refuse(`redeclares "imports"`);
    scope.names.add(name);
  }

  /** Bind the names of a declaration pattern in `target`; defaults and computed keys are expressions in `expr`. */
  pattern(p: AnyNode | null, target: Scope, expr: Scope): void {
    if (p === null) return;
    switch (p.type) {
      case "Identifier": return this.declare(p["name"] as string, target);
      case "ObjectPattern":
        for (const prop of list(p["properties"])) {
          if (prop.type === "RestElement") this.pattern(n(prop["argument"]), target, expr);
          else {
            if (prop["computed"] === true) this.walk(n(prop["key"]), expr);
            this.pattern(n(prop["value"]), target, expr);
          }
        }
        return;
      case "ArrayPattern": for (const e of list(p["elements"])) this.pattern(e, target, expr); return;
      case "RestElement": return this.pattern(n(p["argument"]), target, expr);
      case "AssignmentPattern": this.pattern(n(p["left"]), target, expr); return this.walk(n(p["right"]), expr);
      default: throw refuse(`has an unexpected declaration pattern (${p.type})`);
    }
  }

  /** An assignment target (`x = …`, `[a, b] = …`, `for (x of …)`): identifiers in it are references. */
  target(p: AnyNode | null, scope: Scope): void {
    if (p === null) return;
    switch (p.type) {
      case "ObjectPattern":
        for (const prop of list(p["properties"])) {
          if (prop.type === "RestElement") this.target(n(prop["argument"]), scope);
          else {
            if (prop["computed"] === true) this.walk(n(prop["key"]), scope);
            this.target(n(prop["value"]), scope);
          }
        }
        return;
      case "ArrayPattern": for (const e of list(p["elements"])) this.target(e, scope); return;
      case "RestElement": return this.target(n(p["argument"]), scope);
      case "AssignmentPattern": this.target(n(p["left"]), scope); return this.walk(n(p["right"]), scope);
      default: return this.walk(p, scope);
    }
  }

  fn(node: AnyNode, outer: Scope): void {
    const scope = this.scope(outer, true);
    if (node.type !== "ArrowFunctionExpression") scope.names.add("arguments");
    for (const param of list(node["params"])) this.pattern(param, scope, scope);
    const body = n(node["body"]);
    if (body?.type === "BlockStatement") for (const s of list(body["body"])) this.walk(s, scope);
    else this.walk(body, scope);
  }

  klass(node: AnyNode, scope: Scope): void {
    this.walk(n(node["superClass"]), scope);
    for (const el of list(n(node["body"])?.["body"])) {
      if (el.type === "StaticBlock") {
        const inner = this.scope(scope, true);
        for (const s of list(el["body"])) this.walk(s, inner);
        continue;
      }
      if (el["computed"] === true) this.walk(n(el["key"]), scope);
      this.walk(n(el["value"]), scope);
    }
  }

  member(node: AnyNode, scope: Scope): void {
    const object = n(node["object"]);
    const property = n(node["property"]);
    if (object?.type === "Identifier" && object["name"] === "imports") {
      if (node["computed"] !== true || property?.type !== "Literal" || typeof property["value"] !== "string") {
        throw refuse("reads `imports` other than as imports['<interface>']");
      }
      this.importNames.add(property["value"]);
      return;
    }
    this.walk(object, scope);
    if (node["computed"] === true) {
      if (property?.type === "Literal" && FORBIDDEN_PROPERTIES.has(String(property["value"]))) throw refuse(`reads the property ${JSON.stringify(property["value"])}`);
      this.walk(property, scope);
    } else if (property?.type === "Identifier" && FORBIDDEN_PROPERTIES.has(property["name"] as string) && !isAsyncProbe(object, property)) {
      throw refuse(`reads the property "${property["name"] as string}"`);
    }
  }

  walk(node: AnyNode | null, scope: Scope): void {
    if (node === null) return;
    switch (node.type) {
      case "Identifier": {
        const name = node["name"] as string;
        if (name === "imports") throw refuse("uses `imports` other than as imports['<interface>']");
        this.refs.push({ name, scope });
        return;
      }
      case "ImportDeclaration": case "ImportExpression": case "ExportAllDeclaration": case "ExportDefaultDeclaration":
        throw refuse(`contains ${node.type === "ImportExpression" ? "a dynamic import()" : `an ${node.type}`}`);
      case "MetaProperty":
        if ((n(node["meta"])?.["name"] as string) === "import") this.importMeta.push([node.start, node.end]);
        return;
      case "FunctionDeclaration": this.declare(n(node["id"])?.["name"] as string, scope); return this.fn(node, scope);
      case "FunctionExpression": {
        const inner = this.scope(scope, false);
        const id = n(node["id"]);
        if (id !== null) this.declare(id["name"] as string, inner);
        return this.fn(node, inner);
      }
      case "ArrowFunctionExpression": return this.fn(node, scope);
      case "ClassDeclaration": this.declare(n(node["id"])?.["name"] as string, scope); return this.klass(node, scope);
      case "ClassExpression": {
        const inner = this.scope(scope, false);
        const id = n(node["id"]);
        if (id !== null) this.declare(id["name"] as string, inner);
        return this.klass(node, inner);
      }
      case "VariableDeclaration": return this.variables(node, scope);
      case "BlockStatement": case "StaticBlock": {
        const inner = this.scope(scope, false);
        for (const s of list(node["body"])) this.walk(s, inner);
        return;
      }
      case "ForStatement": case "ForInStatement": case "ForOfStatement": return this.loop(node, scope);
      case "SwitchStatement": {
        this.walk(n(node["discriminant"]), scope);
        const inner = this.scope(scope, false);
        for (const c of list(node["cases"])) {
          this.walk(n(c["test"]), inner);
          for (const s of list(c["consequent"])) this.walk(s, inner);
        }
        return;
      }
      case "CatchClause": {
        const inner = this.scope(scope, false);
        this.pattern(n(node["param"]), inner, inner);
        return this.walk(n(node["body"]), inner);
      }
      case "AssignmentExpression": this.target(n(node["left"]), scope); return this.walk(n(node["right"]), scope);
      case "MemberExpression": return this.member(node, scope);
      case "Property": case "PropertyDefinition": case "MethodDefinition":
        if (node["computed"] === true) this.walk(n(node["key"]), scope);
        else if (node.type === "Property" && (n(node["key"])?.["name"] ?? n(node["key"])?.["value"]) === "__proto__") throw refuse("sets __proto__");
        return this.walk(n(node["value"]), scope);
      case "LabeledStatement": return this.walk(n(node["body"]), scope);
      case "BreakStatement": case "ContinueStatement": case "PrivateIdentifier": case "Literal": case "ThisExpression": case "Super": case "TemplateElement":
        return;
      default:
        return this.children(node, scope);
    }
  }

  /** `var` declares in the enclosing function's scope, `let` and `const` in the block's. */
  variables(node: AnyNode, scope: Scope): void {
    let target = scope;
    if (node["kind"] === "var") while (!target.fn && target.parent !== null) target = target.parent;
    for (const d of list(node["declarations"])) {
      this.pattern(n(d["id"]), target, scope);
      this.walk(n(d["init"]), scope);
    }
  }

  /** A `for`, `for in` or `for of` loop, in a scope of its own. */
  loop(node: AnyNode, scope: Scope): void {
    const inner = this.scope(scope, false);
    const left = n(node["left"]);
    if (left !== null && left.type !== "VariableDeclaration") this.target(left, inner);
    else this.walk(left, inner);
    for (const key of ["init", "test", "update", "right", "body"]) this.walk(n(node[key]), inner);
  }

  /** Any other node: walk every child node. */
  children(node: AnyNode, scope: Scope): void {
    for (const [key, value] of Object.entries(node)) {
      if (key === "type" || key === "start" || key === "end") continue;
      if (Array.isArray(value)) for (const v of list(value)) this.walk(v, scope);
      else if (isNode(value)) this.walk(value, scope);
    }
  }
}

/** The one `export function instantiate(getCoreModule, imports, instantiateCore = …)`, or a refusal. */
function exportedInstantiate(program: AnyNode): { fn: AnyNode; exportKeyword: [number, number] } {
  let found: { fn: AnyNode; exportKeyword: [number, number] } | null = null;
  for (const s of list(program["body"])) {
    if (s.type === "ExpressionStatement" && typeof s["directive"] === "string") continue;
    const fn = n(s["declaration"]);
    const ok = s.type === "ExportNamedDeclaration" && s["source"] === null && list(s["specifiers"]).length === 0 && fn?.type === "FunctionDeclaration" &&
      n(fn["id"])?.["name"] === "instantiate" && found === null;
    if (!ok || fn === null) throw refuse(`has a top-level ${s.type} besides \`export function instantiate\``);
    const params = list(fn["params"]);
    const name = (p: AnyNode | undefined): unknown => (p?.type === "AssignmentPattern" ? n(p["left"])?.["name"] : p?.["name"]);
    if (params.length !== 3 || name(params[0]) !== "getCoreModule" || params[1]?.type !== "Identifier" || name(params[1]) !== "imports" || name(params[2]) !== "instantiateCore") {
      throw refuse("does not declare instantiate(getCoreModule, imports, instantiateCore)");
    }
    found = { fn, exportKeyword: [s.start, fn.start] };
  }
  if (found === null) throw refuse("exports no instantiate function");
  return found;
}

/**
 * Check jco glue (`--instantiation async`) before it is evaluated (see the module notes).
 * @param source the glue's JavaScript (an ES module)
 * @param supplied the import interfaces the runner supplies
 * @returns what the glue imports and reads, and where `export` and `import.meta` are (for evaluation)
 * @throws ReachError `EXEC_SANDBOX_VIOLATION` (`details.reason: "glue"`) naming what is refused: a syntax error, an
 *   import or export, an unsupplied interface (`details.missingImports`), an unknown global (`details.globals`)
 * @example checkGlue(glue.source, new Set(["reach:tool/host"])).importNames // ["reach:tool/host"]
 */
export function checkGlue(source: string, supplied: ReadonlySet<string>): GlueFacts {
  let program: AnyNode;
  try {
    program = parse(source, { ecmaVersion: 2024, sourceType: "module" }) as unknown as AnyNode;
  } catch (err) {
    throw refuse(`does not parse (${(err as Error).message})`);
  }
  const { exportKeyword } = exportedInstantiate(program);
  const walker = new Walker();
  const root = walker.scope(null, true);
  // `imports` is instantiate's parameter: declared by hand so that Walker.declare can refuse any other declaration.
  for (const s of list(program["body"])) {
    const fn = n(s["declaration"]);
    if (fn === null) continue;
    root.names.add("instantiate");
    const scope = walker.scope(root, true);
    scope.names.add("arguments").add("imports");
    const params = list(fn["params"]);
    walker.pattern(params[0]!, scope, scope);
    walker.pattern(params[2]!, scope, scope);
    for (const st of list(n(fn["body"])?.["body"])) walker.walk(st, scope);
  }
  const free = new Set<string>();
  for (const { name, scope } of walker.refs) {
    let s: Scope | null = scope;
    while (s !== null && !s.names.has(name)) s = s.parent;
    if (s === null) free.add(name);
  }
  const unknown = [...free].filter((g) => !GLUE_GLOBALS.has(g) && !GLUE_UNBOUND.has(g)).sort();
  if (unknown.length > 0) throw refuse(`reads globals reach-wasm does not give it: ${unknown.join(", ")}`, { globals: unknown });
  const importNames = [...walker.importNames].sort();
  const missing = importNames.filter((i) => !supplied.has(i));
  if (missing.length > 0) {
    throw new ReachError(
      "EXEC_SANDBOX_VIOLATION",
      `component imports ${missing.join(", ")}, which reach-wasm does not supply; build the tool without them ` +
        `(componentize-js: disableFeatures ["http", "fetch-event"])`,
      { details: { reason: "glue", missingImports: missing }, recoverable: false },
    );
  }
  return { importNames, globals: [...free].sort(), importMeta: walker.importMeta, exportKeyword };
}
