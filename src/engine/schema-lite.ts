/**
 * A small, exact JSON Schema validator for the keywords most tool contracts use, so that a run does not load Ajv
 * (~50–150 ms of module start-up) for a `return_spec` such as `{"type":"object","required":["words"]}`.
 *
 * Supported (draft 2020-12 semantics): `type` (string or array; `integer` = a number with no fraction), `properties`,
 * `required`, `additionalProperties` (boolean or schema), `items` (one schema), `enum`, `const` (JSON equality),
 * `minimum`, `maximum`, `exclusiveMinimum`, `exclusiveMaximum`, `minLength`, `maxLength` (Unicode code points),
 * `pattern` (ECMAScript with the `u` flag), `minItems`, `maxItems`, and the annotations `title`, `description`,
 * `$comment`, `default`, `examples`, `readOnly`, `writeOnly`, `deprecated`. A schema using anything else (or a
 * malformed value of these) returns null from {@link compileLite}: the caller uses Ajv for it.
 * @module
 */

/** A validation step: pushes problems, returns nothing. */
type Check = (value: unknown, path: string, problems: string[]) => void;

const ANNOTATIONS = new Set(["title", "description", "$comment", "default", "examples", "readOnly", "writeOnly", "deprecated"]);
const TYPES = new Set(["string", "number", "integer", "boolean", "null", "array", "object"]);

function isObj(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === "object" && !Array.isArray(v);
}
function isNonNegInt(v: unknown): v is number {
  return typeof v === "number" && Number.isInteger(v) && v >= 0;
}
function typeOf(v: unknown): string {
  if (v === null) return "null";
  if (Array.isArray(v)) return "array";
  return typeof v;
}
function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== typeof b || a === null || b === null || typeof a !== "object") return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a)) {
    const bb = b as unknown[];
    return a.length === bb.length && a.every((x, i) => jsonEqual(x, bb[i]));
  }
  const ka = Object.keys(a as object);
  const kb = Object.keys(b as object);
  if (ka.length !== kb.length) return false;
  return ka.every((k) => Object.prototype.hasOwnProperty.call(b, k) && jsonEqual((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]));
}
function matchesType(v: unknown, t: string): boolean {
  if (t === "integer") return typeof v === "number" && Number.isInteger(v);
  if (t === "number") return typeof v === "number" && Number.isFinite(v);
  return typeOf(v) === t;
}

/**
 * Compile a schema made only of the supported keywords.
 * @param schema a JSON Schema
 * @returns a check, or null when the schema needs the full validator
 */
export function compileLite(schema: unknown, depth = 0): Check | null {
  if (depth > 32) return null;
  if (schema === true) return () => {};
  if (schema === false) return (_v, path, problems) => void problems.push(`${path}: no value is allowed here`);
  if (!isObj(schema)) return null;
  const checks: Check[] = [];
  for (const [key, arg] of Object.entries(schema)) {
    if (ANNOTATIONS.has(key)) continue;
    const check = keywordCheck(schema, key, arg, depth);
    if (check === null) return null;
    checks.push(check);
  }
  return (v, path, p) => {
    for (const c of checks) c(v, path, p);
  };
}

/** The check of one keyword of `schema`, or null when it is not supported (or its argument is not understood). */
function keywordCheck(schema: Record<string, unknown>, key: string, arg: unknown, depth: number): Check | null {
  switch (key) {
    case "type": {
      const types = typeof arg === "string" ? [arg] : Array.isArray(arg) ? arg : null;
      if (types === null || types.length === 0 || !types.every((t) => typeof t === "string" && TYPES.has(t))) return null;
      return (v, path, p) => {
        if (!types.some((t) => matchesType(v, t as string))) p.push(`${path}: must be ${types.join(" or ")}`);
      };
    }
    case "properties": case "required": case "additionalProperties":
      return objectCheck(schema, key, arg, depth);
    case "items": {
      const c = compileLite(arg, depth + 1);
      if (c === null) return null;
      return (v, path, p) => {
        if (Array.isArray(v)) v.forEach((x, i) => c(x, `${path}[${i}]`, p));
      };
    }
    case "enum":
      if (!Array.isArray(arg)) return null;
      return (v, path, p) => {
        if (!arg.some((x) => jsonEqual(x, v))) p.push(`${path}: must be one of ${JSON.stringify(arg)}`);
      };
    case "const":
      return (v, path, p) => {
        if (!jsonEqual(arg, v)) p.push(`${path}: must be ${JSON.stringify(arg)}`);
      };
    case "minimum": case "maximum": case "exclusiveMinimum": case "exclusiveMaximum":
      return boundCheck(key, arg);
    case "minLength": case "maxLength": case "pattern":
      return stringCheck(key, arg);
    case "minItems": case "maxItems":
      if (!isNonNegInt(arg)) return null;
      return (v, path, p) => {
        if (Array.isArray(v) && (key === "minItems" ? v.length < arg : v.length > arg)) p.push(`${path}: must have ${key === "minItems" ? "at least" : "at most"} ${arg} items`);
      };
    default:
      return null;
  }
}

/** `properties`, `required` and `additionalProperties` (for the properties `properties` does not declare). */
function objectCheck(
  schema: Record<string, unknown>,
  key: "properties" | "required" | "additionalProperties",
  arg: unknown,
  depth: number,
): Check | null {
  if (key === "properties") {
    if (!isObj(arg)) return null;
    const props: [string, Check][] = [];
    for (const [name, sub] of Object.entries(arg)) {
      const c = compileLite(sub, depth + 1);
      if (c === null) return null;
      props.push([name, c]);
    }
    return (v, path, p) => {
      if (!isObj(v)) return;
      for (const [name, c] of props) if (Object.prototype.hasOwnProperty.call(v, name)) c(v[name], `${path}.${name}`, p);
    };
  }
  if (key === "required") {
    if (!Array.isArray(arg) || !arg.every((x) => typeof x === "string")) return null;
    return (v, path, p) => {
      if (!isObj(v)) return;
      for (const name of arg as string[]) if (!Object.prototype.hasOwnProperty.call(v, name)) p.push(`${path}: must have required property '${name}'`);
    };
  }
  const c = compileLite(arg, depth + 1);
  if (c === null) return null;
  const declared = isObj(schema["properties"]) ? new Set(Object.keys(schema["properties"])) : new Set<string>();
  return (v, path, p) => {
    if (!isObj(v)) return;
    for (const k of Object.keys(v)) if (!declared.has(k)) c(v[k], `${path}.${k}`, p);
  };
}

/** `minimum`, `maximum`, `exclusiveMinimum` and `exclusiveMaximum`. */
function boundCheck(key: "minimum" | "maximum" | "exclusiveMinimum" | "exclusiveMaximum", arg: unknown): Check | null {
  if (typeof arg !== "number" || !Number.isFinite(arg)) return null;
  const ok = key === "minimum" ? (x: number) => x >= arg : key === "maximum" ? (x: number) => x <= arg : key === "exclusiveMinimum" ? (x: number) => x > arg : (x: number) => x < arg;
  return (v, path, p) => {
    if (typeof v === "number" && !ok(v)) p.push(`${path}: must be ${key.replace("exclusiveM", "m").replace("minimum", ">").replace("maximum", "<")}${key.startsWith("exclusive") ? "" : "="} ${arg}`);
  };
}

/** `minLength`, `maxLength` (in code points) and `pattern` (a `u`-mode regular expression). */
function stringCheck(key: "minLength" | "maxLength" | "pattern", arg: unknown): Check | null {
  if (key === "pattern") {
    if (typeof arg !== "string") return null;
    let re: RegExp;
    try {
      re = new RegExp(arg, "u");
    } catch {
      return null;
    }
    return (v, path, p) => {
      if (typeof v === "string" && !re.test(v)) p.push(`${path}: must match pattern "${arg}"`);
    };
  }
  if (!isNonNegInt(arg)) return null;
  return (v, path, p) => {
    if (typeof v !== "string") return;
    let n = 0;
    for (const _ of v) n++;
    if (key === "minLength" ? n < arg : n > arg) p.push(`${path}: must have ${key === "minLength" ? "at least" : "at most"} ${arg} characters`);
  };
}
