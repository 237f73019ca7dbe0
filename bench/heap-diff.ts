/**
 * `node --import tsx bench/heap-diff.ts A.heapsnapshot B.heapsnapshot C.heapsnapshot`: what a
 * process keeps per run, from three heap snapshots of it taken after forced GCs at three run
 * counts (`npm run bench -- --growth --heap-snapshots DIR` takes them after the first fifth, the
 * middle and the last run). Node has no DevTools here; this is the "objects allocated between
 * snapshots" view of one.
 *
 * V8 numbers each object the first time a snapshot sees it, in allocation order, and keeps the
 * number for the object's life. So an object of C whose number is above A's highest and at most
 * B's was allocated between A and B and is still alive at C: past the windows of finished runs
 * the engine and the ledger keep, that is what runs left behind. They are listed by kind, largest
 * first, each with the chain of retainers of one of them up to an object older than A (where the
 * new objects hang on). Code, feedback and dependent-code lists are the JIT's (see growth.ts).
 */
import { readFileSync } from 'node:fs';

interface Snapshot {
  snapshot: { meta: { node_fields: string[]; node_types: [string[]]; edge_fields: string[]; edge_types: [string[]] } };
  nodes: number[];
  edges: number[];
  strings: string[];
}

const [a, b, c] = process.argv.slice(2).map((file) => JSON.parse(readFileSync(file, 'utf8')) as Snapshot);
if (!a || !b || !c) throw new Error('usage: heap-diff.ts A.heapsnapshot B.heapsnapshot C.heapsnapshot (taken in that order)');

const { meta } = c.snapshot;
const N = meta.node_fields.length;
const E = meta.edge_fields.length;
const [TYPE, NAME, ID, SIZE, EDGES] = ['type', 'name', 'id', 'self_size', 'edge_count'].map((field) => meta.node_fields.indexOf(field)) as [number, number, number, number, number];
const [EDGE_TYPE, EDGE_NAME, EDGE_TO] = ['type', 'name_or_index', 'to_node'].map((field) => meta.edge_fields.indexOf(field)) as [number, number, number];
const nodeType = (s: Snapshot, i: number) => s.snapshot.meta.node_types[0][s.nodes[i * N + TYPE]!]!;

/** The highest object number a snapshot holds (native and synthetic nodes are numbered apart). */
function highestId(s: Snapshot): number {
  let highest = 0;
  for (let i = 0; i < s.nodes.length / N; i++) if (!['native', 'synthetic'].includes(nodeType(s, i))) highest = Math.max(highest, s.nodes[i * N + ID]!);
  return highest;
}
const [low, high] = [highestId(a), highestId(b)];

const count = c.nodes.length / N;
const isNew = (i: number) => c.nodes[i * N + ID]! > low && c.nodes[i * N + ID]! <= high;
const kindOf = (i: number) => {
  const type = nodeType(c, i);
  return type.includes('string') || type === 'code' ? type : `${type} ${c.strings[c.nodes[i * N + NAME]!]!.slice(0, 60)}`;
};
const groups = new Map<string, { count: number; bytes: number; first: number }>();
let total = 0;
for (let i = 0; i < count; i++) {
  if (!isNew(i)) continue;
  const group = groups.get(kindOf(i)) ?? { count: 0, bytes: 0, first: i };
  group.count += 1;
  group.bytes += c.nodes[i * N + SIZE]!;
  total += c.nodes[i * N + SIZE]!;
  groups.set(kindOf(i), group);
}

// Who holds each node (strong edges only).
const retainers = new Map<number, [from: number, edge: number][]>();
for (let i = 0, edge = 0; i < count; i++) {
  for (let k = 0; k < c.nodes[i * N + EDGES]!; k++, edge += E) {
    if (meta.edge_types[0][c.edges[edge + EDGE_TYPE]!] === 'weak') continue;
    const to = c.edges[edge + EDGE_TO]! / N;
    let list = retainers.get(to);
    if (!list) retainers.set(to, (list = []));
    list.push([i, edge]);
  }
}
const edgeName = (edge: number) => {
  const type = meta.edge_types[0][c.edges[edge + EDGE_TYPE]!]!;
  const name = c.edges[edge + EDGE_NAME]!;
  return type === 'element' || type === 'hidden' ? `[${name}]` : `${type}:${c.strings[name]}`;
};
const label = (i: number) => {
  const text = nodeType(c, i).includes('string') ? JSON.stringify(c.strings[c.nodes[i * N + NAME]!]!.slice(0, 50)) : kindOf(i);
  return `${text} @${c.nodes[i * N + ID]}${isNew(i) ? ' (new)' : ''}`;
};
/** Up the retainers from `i`, new ones first, to a few objects older than A. */
function chain(i: number): string[] {
  const lines: string[] = [];
  const seen = new Set([i]);
  let older = 0;
  for (let at = i; lines.length < 16 && older < 4; ) {
    const next = (retainers.get(at) ?? []).filter(([from]) => !seen.has(from)).sort(([x], [y]) => Number(isNew(y)) - Number(isNew(x)))[0];
    if (!next) break;
    const [from, edge] = next;
    lines.push(`  <- ${edgeName(edge)} of ${label(from)}`);
    seen.add(from);
    if (!isNew(from)) older++;
    at = from;
  }
  return lines;
}

const sorted = [...groups].sort(([, x], [, y]) => y.bytes - x.bytes);
process.stdout.write(`${total} bytes allocated between A and B still alive at C, in ${sorted.length} kinds\n`);
for (const [kind, group] of sorted.slice(0, 30)) process.stdout.write(`${String(group.bytes).padStart(9)} ${String(group.count).padStart(7)}  ${kind}\n`);
for (const [kind, group] of sorted.slice(0, 8)) process.stdout.write(`\n${kind}\n${label(group.first)}\n${chain(group.first).join('\n')}\n`);
