#!/usr/bin/env node
// Routes every import from one folder of src/ into another through that folder's mod.ts (ARCHITECTURE.md
// "Layout"): an import of `../engine/run.ts` becomes an import of `../engine/mod.ts`, and the folder's mod.ts
// re-exports what the other folders take from it. Run it after moving files; `--check` only counts (exit 1 when
// an import still reaches past a mod.ts). Names two files of one folder both export are left as they are and listed.
//
//   node scripts/route-through-mod.mjs [--check]
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import process from "node:process";
import { fileURLToPath } from "node:url";
import ts from "typescript";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const src = join(root, "src");
const check = process.argv.includes("--check");

/** The top folder under src/ a path lies in (`engine`, `sandbox`, …), or undefined for src/mod.ts itself. */
function folderOf(path) {
  const rel = relative(src, path);
  if (rel.startsWith("..")) return undefined;
  const parts = rel.split("/");
  return parts.length > 1 ? parts[0] : undefined;
}

/**
 * Rooms whose files are taken one by one: the platform's adapters (files, SQL, HTTP server, threads) each load
 * runtime modules (`node:fs/promises`, `perf_hooks`, readline) at once, and a command takes only the ones it uses, so
 * routing them through one mod.ts would load every adapter at every start (tests/startup-footprint.test.ts).
 */
const TAKEN_ONE_BY_ONE = new Set(["platform"]);

const isTest = (p) => p.endsWith(".test.ts") || /\/_test-[^/]*\.ts$/.test(p);

function program() {
  const config = ts.readConfigFile(join(root, "tsconfig.check.json"), ts.sys.readFile);
  const parsed = ts.parseJsonConfigFileContent(config.config, ts.sys, root);
  return ts.createProgram({ rootNames: parsed.fileNames, options: parsed.options });
}

/** Module specifier → absolute path, as written (the tree writes explicit `.ts` extensions). */
const resolveSpec = (from, spec) => resolve(dirname(from), spec);

function relSpec(from, to) {
  const r = relative(dirname(from), to);
  return r.startsWith(".") ? r : `./${r}`;
}

/**
 * The plan: for each cross-folder import, the names it takes, whether each is a value, and the file that declares
 * them. Returns the edits per importing file and the re-exports each mod.ts needs.
 */
function plan(prog) {
  const checker = prog.getTypeChecker();
  const edits = new Map(); // file → [{start, end, text}]
  const reexports = new Map(); // mod.ts path → Map(target file → Map(name → isValue))
  const skipped = [];
  let crossing = 0;
  let viaMod = 0;
  const modExports = new Map();
  const exportsOfMod = (modPath) => {
    if (!modExports.has(modPath)) {
      const sf = prog.getSourceFile(modPath);
      const sym = sf && checker.getSymbolAtLocation(sf);
      const map = new Map();
      if (sym) for (const e of checker.getExportsOfModule(sym)) map.set(e.name, resolveAlias(checker, e));
      modExports.set(modPath, map);
    }
    return modExports.get(modPath);
  };
  for (const sf of prog.getSourceFiles()) {
    const file = sf.fileName;
    const from = folderOf(file);
    if (from === undefined || isTest(file) || file.includes("/node_modules/")) continue;
    for (const stmt of sf.statements) {
      const spec = moduleSpecifierOf(stmt);
      if (!spec || !spec.text.startsWith(".")) continue;
      const target = resolveSpec(file, spec.text);
      const to = folderOf(target);
      if (to === undefined || to === from || TAKEN_ONE_BY_ONE.has(to)) continue;
      crossing++;
      const modPath = join(src, to, "mod.ts");
      if (target === modPath) {
        viaMod++;
        continue;
      }
      const names = importedNames(stmt);
      if (names === undefined) {
        skipped.push(`${relative(root, file)}: ${spec.text} (a namespace or side-effect import)`);
        continue;
      }
      const have = existsSync(modPath) ? exportsOfMod(modPath) : new Map();
      const targetSf = prog.getSourceFile(target);
      const targetSym = targetSf && checker.getSymbolAtLocation(targetSf);
      if (!targetSym) {
        skipped.push(`${relative(root, file)}: ${spec.text} (not read)`);
        continue;
      }
      const targetExports = new Map(checker.getExportsOfModule(targetSym).map((e) => [e.name, e]));
      let clash = false;
      const adds = [];
      for (const name of names) {
        const sym = targetExports.get(name);
        if (!sym) {
          clash = true;
          break;
        }
        const decl = resolveAlias(checker, sym);
        const already = have.get(name);
        if (already !== undefined && already !== decl) {
          clash = true;
          break;
        }
        const pending = reexports.get(modPath);
        const taken = pending && [...pending.entries()].find(([t, m]) => t !== target && m.has(name));
        if (taken) {
          clash = true;
          break;
        }
        if (already === undefined) adds.push([name, (decl.flags & ts.SymbolFlags.Value) !== 0]);
      }
      if (clash) {
        skipped.push(`${relative(root, file)}: ${spec.text} (a name another file of ${to}/ exports too)`);
        continue;
      }
      if (!reexports.has(modPath)) reexports.set(modPath, new Map());
      const forTarget = reexports.get(modPath);
      if (!forTarget.has(target)) forTarget.set(target, new Map());
      for (const [name, isValue] of adds) forTarget.get(target).set(name, isValue);
      if (!edits.has(file)) edits.set(file, []);
      edits.get(file).push({ start: spec.getStart(sf) + 1, end: spec.getEnd() - 1, text: relSpec(file, modPath) });
    }
  }
  return { edits, reexports, skipped, crossing, viaMod };
}

function resolveAlias(checker, sym) {
  return sym.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(sym) : sym;
}

function moduleSpecifierOf(stmt) {
  if ((ts.isImportDeclaration(stmt) || ts.isExportDeclaration(stmt)) && stmt.moduleSpecifier && ts.isStringLiteral(stmt.moduleSpecifier)) {
    return stmt.moduleSpecifier;
  }
  return undefined;
}

/** The names an import or re-export takes from its module, or undefined when it takes the namespace or nothing. */
function importedNames(stmt) {
  if (ts.isImportDeclaration(stmt)) {
    const clause = stmt.importClause;
    if (!clause || clause.name || !clause.namedBindings || !ts.isNamedImports(clause.namedBindings)) return undefined;
    return clause.namedBindings.elements.map((e) => (e.propertyName ?? e.name).text);
  }
  if (!stmt.exportClause || !ts.isNamedExports(stmt.exportClause)) return undefined;
  return stmt.exportClause.elements.map((e) => (e.propertyName ?? e.name).text);
}

function applyEdits(edits) {
  for (const [file, list] of edits) {
    let text = readFileSync(file, "utf8");
    for (const e of [...list].sort((a, b) => b.start - a.start)) text = text.slice(0, e.start) + e.text + text.slice(e.end);
    writeFileSync(file, text);
  }
}

function writeReexports(reexports) {
  for (const [modPath, byTarget] of reexports) {
    const lines = [];
    for (const [target, names] of [...byTarget].sort(([a], [b]) => a.localeCompare(b))) {
      const spec = relSpec(modPath, target);
      const values = [...names].filter(([, v]) => v).map(([n]) => n).sort();
      const types = [...names].filter(([, v]) => !v).map(([n]) => n).sort();
      if (values.length > 0) lines.push(`export { ${values.join(", ")} } from "${spec}";`);
      if (types.length > 0) lines.push(`export type { ${types.join(", ")} } from "${spec}";`);
    }
    if (lines.length === 0) continue;
    const folder = relative(src, dirname(modPath));
    const head = existsSync(modPath)
      ? readFileSync(modPath, "utf8").replace(/\n*$/, "\n")
      : `/**\n * What other rooms take from src/${folder}/ (ARCHITECTURE.md "Layout"): every import from another folder comes\n * through this file.\n * @module\n */\n`;
    writeFileSync(modPath, `${head}${lines.join("\n")}\n`);
  }
}

const result = plan(program());
const left = result.crossing - result.viaMod;
process.stderr.write(
  `route-through-mod: ${result.crossing} imports cross a folder of src/; ${result.viaMod} go through a mod.ts; ` +
    `${left} do not${check ? "" : " (rewritten now, except those listed)"}\n`,
);
for (const s of result.skipped) process.stderr.write(`  left: ${s}\n`);
if (check) process.exit(left - result.skipped.length > 0 ? 1 : 0);
applyEdits(result.edits);
writeReexports(result.reexports);
