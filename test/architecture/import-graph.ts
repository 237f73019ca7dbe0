import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, normalize } from 'node:path';

/**
 * The import graph of this repository's TypeScript sources, read with a small parser rather than
 * the compiler: the project compiles with TypeScript 7's native `tsc`, which has no JavaScript API,
 * and an import is one of three shapes (`import … from '…'`, `export … from '…'`, `import('…')`).
 * Type-only imports count: a circle through types is still two modules that cannot be read apart.
 */

/** Source file (repo-relative, `.ts`) → the repo-relative source files it imports. */
export type ImportGraph = ReadonlyMap<string, readonly string[]>;

const IMPORT = /(?:^|[;\s])(?:import|export)\s+(?:type\s+)?(?:[\w*{}\s,$]+?\s+from\s+)?['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)/g;

/** What `text` imports, as written (`'../ledger/ledger.js'`, `'zod'`). Comments are not imports. */
export function importSpecifiers(text: string): string[] {
  const code = text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/^\s*\/\/.*$/gm, '');
  return [...code.matchAll(IMPORT)].map((match) => (match[1] ?? match[2])!);
}

/** Every `.ts` file under `dirs` (relative to `root`), skipping declaration files. */
export function sourceFiles(root: string, dirs: readonly string[]): string[] {
  const walk = (dir: string): string[] =>
    readdirSync(join(root, dir)).sort().flatMap((name) => {
      const path = join(dir, name);
      if (statSync(join(root, path)).isDirectory()) return name === 'node_modules' ? [] : walk(path);
      return path.endsWith('.ts') && !path.endsWith('.d.ts') ? [path] : [];
    });
  return dirs.filter((dir) => existsSync(join(root, dir))).flatMap(walk);
}

/** The graph among `files`: relative imports resolved to the `.ts` source they name; packages left out. */
export function importGraph(root: string, files: readonly string[]): ImportGraph {
  const known = new Set(files);
  return new Map(
    files.map((file) => {
      const targets = importSpecifiers(readFileSync(join(root, file), 'utf8'))
        .filter((specifier) => specifier.startsWith('.'))
        .map((specifier) => normalize(join(dirname(file), specifier)).replace(/\.(m?js)$/, '.ts'))
        .filter((target) => known.has(target));
      return [file, [...new Set(targets)]];
    }),
  );
}

/**
 * Each import circle in `graph`, once: the strongly connected components with more than one file
 * (or a file importing itself), each as a sorted list. Tarjan's algorithm, iterative so a deep
 * chain cannot overflow the stack.
 *
 * @example
 * importCircles(new Map([['a.ts', ['b.ts']], ['b.ts', ['a.ts']], ['c.ts', ['a.ts']]]))
 * // → [['a.ts', 'b.ts']]
 */
export function importCircles(graph: ImportGraph): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const onStack = new Set<string>();
  const stack: string[] = [];
  const circles: string[][] = [];
  let next = 0;
  for (const start of graph.keys()) {
    if (index.has(start)) continue;
    const frames: { node: string; edge: number }[] = [{ node: start, edge: 0 }];
    index.set(start, next);
    low.set(start, next++);
    stack.push(start);
    onStack.add(start);
    while (frames.length > 0) {
      const frame = frames[frames.length - 1]!;
      const edges = graph.get(frame.node) ?? [];
      if (frame.edge < edges.length) {
        const to = edges[frame.edge++]!;
        if (!index.has(to)) {
          index.set(to, next);
          low.set(to, next++);
          stack.push(to);
          onStack.add(to);
          frames.push({ node: to, edge: 0 });
        } else if (onStack.has(to)) {
          low.set(frame.node, Math.min(low.get(frame.node)!, index.get(to)!));
        }
        continue;
      }
      frames.pop();
      const parent = frames[frames.length - 1];
      if (parent) low.set(parent.node, Math.min(low.get(parent.node)!, low.get(frame.node)!));
      if (low.get(frame.node) !== index.get(frame.node)) continue;
      const component: string[] = [];
      let member: string;
      do {
        member = stack.pop()!;
        onStack.delete(member);
        component.push(member);
      } while (member !== frame.node);
      if (component.length > 1 || edges.includes(frame.node)) circles.push(component.sort());
    }
  }
  return circles;
}


/** A layer: the files it holds, by path prefix (a folder ends in `/`). */
export interface Layer {
  readonly name: string;
  readonly paths: readonly string[];
}

/** The layer of `file`, as an index into `layers` (0 the lowest); undefined when none holds it. */
export function layerOf(layers: readonly Layer[], file: string): number | undefined {
  const index = layers.findIndex((layer) => layer.paths.some((path) => (path.endsWith('/') ? file.startsWith(path) : file === path)));
  return index === -1 ? undefined : index;
}

/**
 * Each import in `graph` that runs against `layers` (listed lowest first): a file in a layer that
 * imports a file of a higher layer. Files in no layer are not judged, and may be imported by none
 * of the layered files (an import from layered code to outside the layers is reported too).
 */
export function layerViolations(graph: ImportGraph, layers: readonly Layer[]): string[] {
  const violations: string[] = [];
  for (const [file, targets] of graph) {
    const from = layerOf(layers, file);
    if (from === undefined) continue;
    for (const target of targets) {
      const to = layerOf(layers, target);
      if (to === undefined) violations.push(`${file} (${layers[from]!.name}) imports ${target}, which is outside the layers`);
      else if (to > from) violations.push(`${file} (${layers[from]!.name}) imports ${target} (${layers[to]!.name}), a higher layer`);
    }
  }
  return violations;
}

/**
 * The folder a file belongs to, as the folder-cycle check sees the tree: its directory
 * (`lambdas/ledger/embedded-ledger.ts` → `lambdas/ledger/`), except that a file directly in a
 * top-level source folder is a node of its own (`lambdas/define.ts`): it is a rung by itself.
 */
export function folderOf(file: string): string {
  const directory = dirname(file);
  return directory.includes('/') ? `${directory}/` : file;
}

/** `graph` collapsed to folders (folderOf): an edge for every import that crosses from one folder to another. */
export function folderGraph(graph: ImportGraph): ImportGraph {
  const folders = new Map<string, Set<string>>();
  for (const [file, targets] of graph) {
    const from = folderOf(file);
    const edges = folders.get(from) ?? new Set<string>();
    folders.set(from, edges);
    for (const target of targets) if (folderOf(target) !== from) edges.add(folderOf(target));
  }
  return new Map([...folders].map(([folder, edges]) => [folder, [...edges].sort()]));
}

/**
 * Each circle among folders (a folder that imports, round any path, a folder that imports it),
 * with the file imports that close it: `['lambdas/ledger/ → lambdas/guards/: lambdas/ledger/ledger.ts
 * imports lambdas/guards/breaker.ts', …]`, so a failure names the imports to move.
 */
export function folderCircles(graph: ImportGraph): { folders: string[]; imports: string[] }[] {
  return importCircles(folderGraph(graph)).map((folders) => {
    const members = new Set(folders);
    const imports = [...graph].flatMap(([file, targets]) =>
      targets
        .filter((target) => folderOf(target) !== folderOf(file) && members.has(folderOf(file)) && members.has(folderOf(target)))
        .map((target) => `${folderOf(file)} → ${folderOf(target)}: ${file} imports ${target}`),
    );
    return { folders, imports: imports.sort() };
  });
}
