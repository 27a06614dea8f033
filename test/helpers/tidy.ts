/**
 * The checks of test/tidy.test.ts, as pure functions of a file's path and text, so that the
 * test can show each one catching what it is for. The rules themselves (bounds, folders, the
 * hot-path files, the allow-lists) are in the test's header.
 *
 * Functions are found with TypeScript's own parser, so strings, comments and template literals
 * never look like code: a function is a declaration, method, constructor, accessor, function
 * expression or arrow function with a body, and its length counts every line from its first
 * token to its closing brace (nested functions count in their parent too, as tidy.zig does).
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import ts from 'typescript';

/** Folders a clone does not have: git's own, and what .gitignore names (installed, built, tap's records). */
const NOT_THE_TREE = new Set(['.git', 'node_modules', 'dist', '.tap', 'build', 'bench/out']);

/** Every file under `folders` of `root` whose path (relative, '/'-separated) passes `keep`. */
export function readFiles(root: string, folders: readonly string[], keep: (path: string) => boolean): Map<string,
string> {
  const out = new Map<string, string>();
  const walk = (dir: string): void => {
    for (const name of readdirSync(dir)) {
      const full = join(dir, name);
      const path = relative(root, full).split(sep).join('/');
      if (NOT_THE_TREE.has(name) || NOT_THE_TREE.has(path)) continue;
      if (statSync(full).isDirectory()) walk(full);
      else if (keep(path)) out.set(path, readFileSync(full, 'utf8'));
    }
  };
  for (const f of folders) walk(join(root, f));
  return out;
}

/** `path:line (N columns)` for each line longer than `limit` code points that `exempt` does not excuse. */
export function longLines(path: string, text: string, limit: number, exempt: (line: string) => boolean): string[] {
  const out: string[] = [];
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const columns = [...lines[i]!].length;
    if (columns > limit && !exempt(lines[i]!)) out.push(`${path}:${i + 1} (${columns} columns)`);
  }
  return out;
}

/** A function of a file: its dotted name (class, method, the variable or property it initializes) and lines. */
export interface FunctionSpan {
  name: string;
  line: number;
  lines: number;
}

function parse(path: string, text: string): ts.SourceFile {
  const kind = path.endsWith('.ts') ? ts.ScriptKind.TS : ts.ScriptKind.JS;
  return ts.createSourceFile(path, text, ts.ScriptTarget.Latest, true, kind);
}

/** The name a node gives the function it holds or is: `Class.method`, `makeThing`, `controls.counters`. */
function ownName(node: ts.Node, sf: ts.SourceFile): string | undefined {
  if (ts.isConstructorDeclaration(node)) return 'constructor';
  if (
    ts.isFunctionDeclaration(node) || ts.isMethodDeclaration(node) || ts.isClassDeclaration(node) ||
    ts.isClassExpression(node) || ts.isGetAccessorDeclaration(node) || ts.isSetAccessorDeclaration(node) ||
    ts.isPropertyDeclaration(node) || ts.isPropertyAssignment(node) || ts.isVariableDeclaration(node) ||
    ts.isMethodSignature(node)
  ) {
    return node.name?.getText(sf);
  }
  // A callback given with a title, as tests are (`t.test('rule 6: ...', async (t) => {...})`).
  if ((ts.isArrowFunction(node) || ts.isFunctionExpression(node)) && ts.isCallExpression(node.parent)) {
    const title = node.parent.arguments[0];
    const text = title !== undefined && title !== node ? titleText(title) : undefined;
    if (text !== undefined) return `${node.parent.expression.getText(sf)}('${text.slice(0, 60)}')`;
  }
  return undefined;
}

/** A title written as a string, or as strings joined with `+` (a long title wrapped); template parts as written. */
function titleText(node: ts.Node): string | undefined {
  if (ts.isStringLiteralLike(node)) return node.text;
  if (ts.isTemplateExpression(node)) return node.getText().slice(1, -1);
  if (ts.isBinaryExpression(node) && node.operatorToken.kind === ts.SyntaxKind.PlusToken) {
    const left = titleText(node.left);
    const right = titleText(node.right);
    return left !== undefined && right !== undefined ? left + right : undefined;
  }
  return undefined;
}

function dottedName(node: ts.Node, sf: ts.SourceFile): string {
  const parts: string[] = [];
  for (let n: ts.Node | undefined = node; n !== undefined && !ts.isSourceFile(n); n = n.parent) {
    const name = ownName(n, sf);
    if (name !== undefined) parts.unshift(name);
  }
  return parts.length > 0 ? parts.join('.') : '(anonymous)';
}

const lineOf = (sf: ts.SourceFile, pos: number): number => sf.getLineAndCharacterOfPosition(pos).line + 1;

/** Every function with a body in a TypeScript or JavaScript file, outermost first. */
export function functionSpans(path: string, text: string): FunctionSpan[] {
  return spans(parse(path, text), false).map((s) => ({ name: s.name, line: s.first, lines: s.last - s.first + 1 }));
}

/** The functions with a body (and the classes, if `classes`) of a file: dotted name, first and last line, node. */
function spans(sf: ts.SourceFile, classes: boolean): { name: string; first: number; last: number; node: ts.Node }[] {
  const out: { name: string; first: number; last: number; node: ts.Node }[] = [];
  const visit = (n: ts.Node): void => {
    const fn = ts.isFunctionLike(n) && 'body' in n && n.body !== undefined;
    if (fn || (classes && ts.isClassDeclaration(n))) {
      out.push({ name: dottedName(n, sf), first: lineOf(sf, n.getStart(sf)), last: lineOf(sf, n.end), node: n });
    }
    ts.forEachChild(n, visit);
  };
  visit(sf);
  return out;
}

/** What the hot-path rule forbids: a closure or a BigInt made where it would be made per operation. */
export interface HotPathFinding {
  what: 'closure' | 'BigInt literal' | 'BigInt()';
  line: number;
  /** The function the thing is made in (dotted name), or '(module)'. */
  within: string;
}

/** The nearest enclosing function of `node`, or undefined at module level or in a class field initializer. */
function enclosingFunction(node: ts.Node): ts.SignatureDeclaration | undefined {
  for (let n = node.parent; n !== undefined && !ts.isSourceFile(n); n = n.parent) {
    if (ts.isFunctionLike(n)) {
      // A module-level IIFE (`const TABLE = (() => { ... })();`) runs once, at load: module level.
      if ((ts.isArrowFunction(n) || ts.isFunctionExpression(n)) && enclosingFunction(n) === undefined) {
        let callee: ts.Node = n;
        while (ts.isParenthesizedExpression(callee.parent)) callee = callee.parent;
        if (ts.isCallExpression(callee.parent) && callee.parent.expression === callee) continue;
      }
      return n;
    }
  }
  return undefined;
}

/**
 * Closures (arrow functions, function expressions) and BigInts (`1n`, `BigInt(x)`) in a
 * hot-path file that are made inside a function: each call of that function would make them
 * again. Made at module level, in a class field's initializer or in a constructor (once per
 * object), or in a function named in `setup`, they are setup and allowed.
 */
export function hotPathFindings(path: string, text: string, setup: ReadonlySet<string>): HotPathFinding[] {
  const sf = parse(path, text);
  const out: HotPathFinding[] = [];
  const visit = (n: ts.Node): void => {
    let what: HotPathFinding['what'] | undefined;
    if (ts.isArrowFunction(n) || ts.isFunctionExpression(n)) what = 'closure';
    else if (n.kind === ts.SyntaxKind.BigIntLiteral) what = 'BigInt literal';
    else if (ts.isCallExpression(n) && ts.isIdentifier(n.expression) && n.expression.text === 'BigInt')
      what = 'BigInt()';
    if (what !== undefined) {
      const f = enclosingFunction(n);
      const within = f === undefined ? '(module)' : dottedName(f, sf);
      if (f !== undefined && !ts.isConstructorDeclaration(f) && !setup.has(within)) {
        out.push({ what, line: lineOf(sf, n.getStart(sf)), within });
      }
    }
    ts.forEachChild(n, visit);
  };
  visit(sf);
  return out;
}

/** A family compared by name (`chip.family === 'P7'`, `case 'P5':`): where a profile fact should be read. */
export interface FamilyComparison {
  line: number;
  text: string;
}

const FAMILY_NAME = /^P[0-9]$/;

/**
 * Comparisons of a value with a chip family's name (`===`, `!==`, `==`, `!=` against 'P3'..'P9',
 * either side) and switch cases on one, found by TypeScript's parser: a string or comment that
 * names a family is no comparison.
 */
export function familyComparisons(path: string, text: string): FamilyComparison[] {
  const sf = parse(path, text);
  const out: FamilyComparison[] = [];
  const isFamily = (n: ts.Node): boolean => ts.isStringLiteralLike(n) && FAMILY_NAME.test(n.text);
  const equality = new Set([
    ts.SyntaxKind.EqualsEqualsEqualsToken, ts.SyntaxKind.ExclamationEqualsEqualsToken,
    ts.SyntaxKind.EqualsEqualsToken, ts.SyntaxKind.ExclamationEqualsToken,
  ]);
  const visit = (n: ts.Node): void => {
    const compared = ts.isBinaryExpression(n) && equality.has(n.operatorToken.kind) &&
      (isFamily(n.left) || isFamily(n.right));
    if (compared || (ts.isCaseClause(n) && isFamily(n.expression))) {
      out.push({ line: lineOf(sf, n.getStart(sf)), text: n.getText(sf).split('\n')[0]! });
    }
    ts.forEachChild(n, visit);
  };
  visit(sf);
  return out;
}

/**
 * A hand-inlined copy on the hot path (test/tidy.test.ts PERF_FORKS): a function or class that
 * says it is one (a comment naming PERF_FORKS, in its doc comment or body), or, in a hot-path
 * file, a function that writes a number where a named constant stands (the constant's name in
 * the comment after it, `& 4095; // RING_ROOM`): a copy of what the constant's users compute.
 */
export interface PerfForkMark {
  /** Dotted name, as functionSpans names functions (a class: its name). */
  name: string;
  line: number;
  how: 'marked' | 'literal';
}

/** A number, then the comment naming the constant it stands for (an upper-case name with an underscore). */
const LITERAL_FOR_CONSTANT = /(?:\b0x[0-9a-fA-F]+|\b\d+)\)*[;,]?\s*\/\/\s*(?:[A-Za-z]+\.)?[A-Z][A-Z0-9]*_[A-Z0-9_]+/;

/** The forks of a file: marked ones anywhere, literal-for-constant ones where `hot` (a hot-path file). */
export function perfForkMarks(path: string, text: string, hot: boolean): PerfForkMark[] {
  const sf = parse(path, text);
  const withClasses = spans(sf, true);
  const found = new Map<string, PerfForkMark>();
  const add = (m: PerfForkMark): void => { if (!found.has(m.name)) found.set(m.name, m); };
  for (const s of withClasses) {
    const before = text.slice(s.node.getFullStart(), s.node.getStart(sf));
    if (before.includes('PERF_FORKS')) add({ name: s.name, line: s.first, how: 'marked' });
  }
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const marked = /\/\/.*PERF_FORKS/.test(lines[i]!);
    if (!marked && !(hot && LITERAL_FOR_CONSTANT.test(lines[i]!))) continue;
    // The innermost function (or class) around the line.
    let inner: (typeof withClasses)[number] | undefined;
    for (const s of withClasses) {
      if (s.first <= i + 1 && i + 1 <= s.last && (inner === undefined || s.last - s.first < inner.last - inner.first))
        inner = s;
    }
    if (inner !== undefined) add({ name: inner.name, line: i + 1, how: marked ? 'marked' : 'literal' });
  }
  return [...found.values()];
}

/** The dotted names of every function and class of a file (to check that a named definition exists). */
export function definedNames(path: string, text: string): Set<string> {
  return new Set(spans(parse(path, text), true).map((s) => s.name));
}
