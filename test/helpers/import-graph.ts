/**
 * The source tree's import graph and the layering rules it must keep (docs/architecture.md):
 * folders are layers and every import points down.
 *
 *   scripts/ bench/ test/  ->  lib/  ->  drivers/  ->  firmware-hwrm/
 *
 * and the software NIC's model is pure: nothing under drivers/emu/model/ imports drivers/emu/host/,
 * or reaches a Node built-in module, koffi or worker_threads (modelImpurities).
 *
 * Imports are read with TypeScript's own pre-processor (ts.preProcessFile), which sees static,
 * type-only, re-export and dynamic imports (and `import('x')` types and `require('x')`) and
 * ignores comments and strings. Relative specifiers name files of the tree (importGraph); the
 * rest name packages and Node's built-ins (packageImports).
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { isBuiltin } from 'node:module';
import { dirname, join, normalize, relative, sep } from 'node:path';
import ts from 'typescript';

/** Source file (path relative to the root, '/'-separated) -> the files it imports. */
export type ImportGraph = Map<string, string[]>;

const SOURCE = /\.(ts|mts|mjs|js)$/;

/** The graph of `sources` (path -> text), paths relative to the root with '/' separators. */
export function importGraph(sources: ReadonlyMap<string, string>): ImportGraph {
  const graph: ImportGraph = new Map();
  for (const [path, text] of sources) {
    const targets: string[] = [];
    for (const ref of ts.preProcessFile(text, true, true).importedFiles) {
      if (!ref.fileName.startsWith('.')) continue;
      targets.push(normalize(join(dirname(path), ref.fileName)).split(sep).join('/'));
    }
    graph.set(path, targets);
  }
  return graph;
}

/** Source file -> the packages and built-in modules it imports ('koffi', 'node:fs'), as written. */
export function packageImports(sources: ReadonlyMap<string, string>): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const [path, text] of sources) {
    const names = ts.preProcessFile(text, true, true).importedFiles.map((ref) => ref.fileName);
    out.set(path, names.filter((name) => !name.startsWith('.')));
  }
  return out;
}

/** Every source file under `folders` of `root` (node_modules and dist are not the tree's). */
export function readTree(root: string, folders: readonly string[]): Map<string, string> {
  const out = new Map<string, string>();
  const walk = (dir: string): void => {
    for (const name of readdirSync(dir)) {
      if (name === 'node_modules' || name === 'dist' || name.startsWith('.')) continue;
      const full = join(dir, name);
      if (statSync(full).isDirectory()) walk(full);
      else if (SOURCE.test(name) && !name.endsWith('.d.ts'))
        out.set(relative(root, full).split(sep).join('/'), readFileSync(full, 'utf8'));
    }
  };
  for (const f of folders) walk(join(root, f));
  return out;
}

const top = (path: string): string => path.split('/')[0]!;

/** Imports that run up: drivers/ or firmware-hwrm/ into lib/ or the tools, firmware-hwrm/ into drivers/. */
export function upwardImports(graph: ImportGraph): string[] {
  return forbiddenImports(graph, {
    drivers: ['lib', 'scripts', 'bench', 'test'],
    'firmware-hwrm': ['drivers', 'lib', 'scripts', 'bench', 'test'],
  });
}

/**
 * Imports from a top folder into one `rules` forbids it (folder -> the folders it may not
 * import): e.g. the tools' rule, scripts/ and bench/ take nothing from test/ (tests import the
 * runners they share with the scripts, never the other way round).
 */
export function forbiddenImports(graph: ImportGraph, rules: Readonly<Record<string, readonly string[]>>): string[] {
  const out: string[] = [];
  for (const [from, targets] of graph) {
    const banned = rules[top(from)];
    if (!banned) continue;
    for (const to of targets) if (banned.includes(top(to))) out.push(`${from} -> ${to}`);
  }
  return out;
}

const MODEL = 'drivers/emu/model/';
const HOST = 'drivers/emu/host/';

/** What the model may not reach: Node's built-in modules (node:* or the bare name: worker_threads too) and koffi. */
const outsideTheModel = (name: string): boolean => isBuiltin(name) || name === 'koffi' || name.startsWith('koffi/');

/** How a file outside the model came to be checked: the model's file that reaches it. */
const via = (file: string, from: string): string => (file.startsWith(MODEL) ? '' : ` (reached from ${from})`);

/**
 * What breaks the model's purity: every file the model reaches (its own, or one outside it that
 * it imports, at any depth) that imports drivers/emu/host/, a Node built-in module or koffi.
 * Type-only imports count: the model's types name nothing of its hosts either. Each as
 * 'file -> import', with the model's file that reaches it.
 */
export function modelImpurities(graph: ImportGraph, packages: ReadonlyMap<string, readonly string[]>): string[] {
  const out: string[] = [];
  const reachedFrom = new Map<string, string>();
  for (const from of graph.keys()) {
    if (!from.startsWith(MODEL)) continue;
    const work = [from];
    while (work.length > 0) {
      const file = work.pop()!;
      if (reachedFrom.has(file)) continue;
      reachedFrom.set(file, from);
      for (const to of graph.get(file) ?? []) {
        if (to.startsWith(HOST)) out.push(`${file} -> ${to}${via(file, from)}`);
        else work.push(to);
      }
    }
  }
  for (const [file, from] of reachedFrom) {
    for (const name of packages.get(file) ?? []) {
      if (outsideTheModel(name)) out.push(`${file} -> ${name}${via(file, from)}`);
    }
  }
  return out.sort();
}

/**
 * The import circles (strongly connected components of more than one file, or a file that
 * imports itself) among the files whose path starts with `prefix`; each as its files, sorted.
 */
export function circles(graph: ImportGraph, prefix: string): string[][] {
  const inside = (p: string) => p.startsWith(prefix) && graph.has(p);
  // Tarjan's algorithm, iterative so a deep chain cannot overflow the stack.
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const onStack = new Set<string>();
  const stack: string[] = [];
  const found: string[][] = [];
  let next = 0;
  for (const start of graph.keys()) {
    if (!inside(start) || index.has(start)) continue;
    const work: { node: string; edge: number }[] = [{ node: start, edge: 0 }];
    index.set(start, next);
    low.set(start, next++);
    stack.push(start);
    onStack.add(start);
    while (work.length > 0) {
      const frame = work[work.length - 1]!;
      const edges = graph.get(frame.node)!.filter(inside);
      if (frame.edge < edges.length) {
        const to = edges[frame.edge++]!;
        if (!index.has(to)) {
          index.set(to, next);
          low.set(to, next++);
          stack.push(to);
          onStack.add(to);
          work.push({ node: to, edge: 0 });
        } else if (onStack.has(to)) {
          low.set(frame.node, Math.min(low.get(frame.node)!, index.get(to)!));
        }
        continue;
      }
      work.pop();
      const parent = work[work.length - 1];
      if (parent) low.set(parent.node, Math.min(low.get(parent.node)!, low.get(frame.node)!));
      if (low.get(frame.node) !== index.get(frame.node)) continue;
      const component: string[] = [];
      for (;;) {
        const member = stack.pop()!;
        onStack.delete(member);
        component.push(member);
        if (member === frame.node) break;
      }
      const selfLoop = component.length === 1 && graph.get(frame.node)!.includes(frame.node);
      if (component.length > 1 || selfLoop) found.push(component.sort());
    }
  }
  return found;
}
