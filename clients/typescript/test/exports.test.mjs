// The hand-written declarations (src/*.d.mts) against the modules (src/*.mjs): every module has
// its declarations, they compile, and they declare as values exactly the names the module
// exports at run time (a missing name, or one declared that the module lacks, fails, listed),
// each of the right kind: a class as a class, a function as something callable, a constant as
// a constant of the same primitive type (and, for a literal type, the same value). Types and
// interfaces, which have no run-time counterpart, are not compared. Uses the TypeScript
// compiler API with the options of tsconfig.json; no server, no browser.

import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import ts from "typescript";

const root = fileURLToPath(new URL("../", import.meta.url));
const srcDir = join(root, "src");

/** Every src/*.mjs, and its sibling .d.mts (null where there is none). */
const modules = readdirSync(srcDir)
  .filter((f) => f.endsWith(".mjs"))
  .sort()
  .map((f) => {
    const dts = join(srcDir, f.replace(/\.mjs$/, ".d.mts"));
    return { name: f, mjs: join(srcDir, f), dts: existsSync(dts) ? dts : null };
  });

/** The project's compiler options (tsconfig.json), on the declaration files alone. */
function makeProgram(rootNames) {
  const configPath = join(root, "tsconfig.json");
  const read = ts.readConfigFile(configPath, ts.sys.readFile);
  if (read.error) throw new Error(ts.flattenDiagnosticMessageText(read.error.messageText, "\n"));
  const parsed = ts.parseJsonConfigFileContent(read.config, ts.sys, root, undefined, configPath);
  return ts.createProgram({ rootNames, options: parsed.options });
}

const program = makeProgram(modules.filter((m) => m.dts).map((m) => m.dts));
const checker = program.getTypeChecker();

const formatDiagnostics = (diagnostics) =>
  ts.formatDiagnostics(diagnostics, {
    getCanonicalFileName: (f) => f,
    getCurrentDirectory: () => root,
    getNewLine: () => "\n",
  });

/** Whether an alias declaration is type-only (`export type {…}`, `import type …`). */
function typeOnlyDeclaration(d) {
  if (ts.isExportSpecifier(d)) return d.isTypeOnly || d.parent.parent.isTypeOnly;
  if (ts.isImportSpecifier(d)) return d.isTypeOnly || d.parent.parent.isTypeOnly;
  if (ts.isImportClause(d)) return d.isTypeOnly;
  if (ts.isNamespaceImport(d)) return d.parent.isTypeOnly;
  if (ts.isNamespaceExport(d) || ts.isExportDeclaration(d)) return (ts.isExportDeclaration(d) ? d : d.parent).isTypeOnly;
  return false;
}

/** The symbol an export stands for (aliases followed), and whether the export is type-only. */
function resolveExport(symbol) {
  let s = symbol;
  while (s.flags & ts.SymbolFlags.Alias) {
    if ((s.declarations ?? []).some(typeOnlyDeclaration)) return { target: s, typeOnly: true };
    const next = checker.getImmediateAliasedSymbol(s);
    if (!next) return { target: checker.getAliasedSymbol(symbol), typeOnly: false };
    s = next;
  }
  return { target: s, typeOnly: false };
}

/** The value exports a declaration file declares: name → resolved symbol. */
function declaredValues(dts) {
  const sf = program.getSourceFile(dts);
  assert.ok(sf, `${dts} is not in the program`);
  const moduleSymbol = checker.getSymbolAtLocation(sf);
  const values = new Map();
  if (!moduleSymbol) return values; // not a module: it declares nothing
  for (const symbol of checker.getExportsOfModule(moduleSymbol)) {
    const { target, typeOnly } = resolveExport(symbol);
    if (!typeOnly && target.flags & ts.SymbolFlags.Value) values.set(symbol.name, target);
  }
  return values;
}

const isClass = (v) => typeof v === "function" && /^class[\s{]/.test(Function.prototype.toString.call(v));

/** Why the declaration of `name` does not fit its run-time value `value`, or null. */
function kindProblem(name, value, symbol) {
  const F = ts.SymbolFlags;
  const type = checker.getTypeOfSymbol(symbol);
  const shown = checker.typeToString(type);
  if (isClass(value)) {
    if (!(symbol.flags & F.Class) && type.getConstructSignatures().length === 0) {
      return `${name} is a class at run time but is declared as ${shown}, which cannot be constructed`;
    }
    return null;
  }
  if (typeof value === "function") {
    if (type.getCallSignatures().length === 0) {
      return `${name} is a function at run time but is declared as ${shown}, which cannot be called`;
    }
    return null;
  }
  if (symbol.flags & (F.Function | F.Class)) {
    return `${name} is a ${value === null ? "null" : typeof value} constant at run time but is declared as a ${symbol.flags & F.Class ? "class" : "function"}`;
  }
  const like = {
    string: ts.TypeFlags.StringLike,
    number: ts.TypeFlags.NumberLike,
    bigint: ts.TypeFlags.BigIntLike,
    boolean: ts.TypeFlags.BooleanLike,
  }[typeof value];
  if (like !== undefined) {
    const parts = type.isUnion() ? type.types : [type];
    if (!parts.every((t) => t.flags & like)) return `${name} is a ${typeof value} at run time but is declared as ${shown}`;
    if ((type.isStringLiteral() || type.isNumberLiteral()) && type.value !== value) {
      return `${name} is ${JSON.stringify(value)} at run time but is declared as ${shown}`;
    }
    return null;
  }
  if (typeof value === "object" && value !== null) {
    if (!(type.flags & ts.TypeFlags.Object) || type.getCallSignatures().length > 0) {
      return `${name} is an object at run time but is declared as ${shown}`;
    }
    if (Array.isArray(value) && !checker.isArrayType(type) && !checker.isTupleType(type)) {
      return `${name} is an array at run time but is declared as ${shown}`;
    }
  }
  return null;
}

for (const m of modules) {
  test(`${m.name}: its declarations name every export, as the right kind`, async () => {
    assert.ok(m.dts, `src/${m.name} has no declarations: write src/${m.name.replace(/\.mjs$/, ".d.mts")}`);
    const sf = program.getSourceFile(m.dts);
    const diagnostics = ts.getPreEmitDiagnostics(program, sf);
    assert.equal(diagnostics.length, 0, `the declarations do not compile:\n${formatDiagnostics(diagnostics)}`);

    const runtime = await import(pathToFileURL(m.mjs).href);
    const runtimeNames = new Set(Object.keys(runtime));
    const declared = declaredValues(m.dts);
    const missing = [...runtimeNames].filter((n) => !declared.has(n)).sort();
    const extra = [...declared.keys()].filter((n) => !runtimeNames.has(n)).sort();
    assert.deepEqual(
      { missing, extra },
      { missing: [], extra: [] },
      `${m.name} and its .d.mts differ: exported but not declared: [${missing.join(", ")}]; ` +
        `declared but not exported: [${extra.join(", ")}]`,
    );

    const problems = [...declared]
      .map(([name, symbol]) => kindProblem(name, runtime[name], symbol))
      .filter((p) => p !== null);
    assert.deepEqual(problems, [], `${m.name}: declared as the wrong kind:\n${problems.join("\n")}`);
  });
}
