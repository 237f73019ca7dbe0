import { existsSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, normalize } from 'node:path';

/**
 * Reading markdown as GitHub renders it, for the tests that hold the README and the guides to
 * their links: the anchors a file's headings get, and the links it makes (code blocks and code
 * spans are text, not links).
 */

/** The lines of `markdown` outside fenced code blocks (a fence may be indented, as in a list). */
function proseLines(markdown: string): string[] {
  let fenced = false;
  return markdown.split('\n').filter((line) => {
    if (/^\s*```/.test(line)) {
      fenced = !fenced;
      return false;
    }
    return !fenced;
  });
}

/** GitHub's anchor of a heading: lower case, punctuation dropped (letters, digits, `-` and `_` kept), spaces as `-`. */
export function slugOf(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\p{M}\p{Pc} -]/gu, '')
    .replace(/ /g, '-');
}

/** Every anchor `markdown`'s headings make, a repeated one numbered as GitHub does (`deploy`, `deploy-1`). */
export function anchorsOf(markdown: string): Set<string> {
  const seen = new Map<string, number>();
  const anchors = new Set<string>();
  for (const line of proseLines(markdown)) {
    const heading = /^#{1,6} (.+)$/.exec(line)?.[1];
    if (heading === undefined) continue;
    const slug = slugOf(heading);
    const count = seen.get(slug) ?? 0;
    seen.set(slug, count + 1);
    anchors.add(count === 0 ? slug : `${slug}-${count}`);
  }
  return anchors;
}

/** Every link target of `markdown` (`[text](target)`, `![alt](target)`), outside code. */
export function linksOf(markdown: string): string[] {
  return proseLines(markdown).flatMap((line) => [...line.replace(/`[^`]*`/g, '').matchAll(/\]\(([^)\s]+)\)/g)].map((match) => match[1]!));
}

/**
 * What is wrong with each relative link of the markdown files `files` (path from `root` → text):
 * a file or folder that does not exist, or an anchor that no heading of its file makes. Links to
 * other sites (`https:`, `mailto:`) are not followed: the tests have no network.
 */
export function brokenLinks(root: string, files: ReadonlyMap<string, string>): string[] {
  const broken: string[] = [];
  for (const [path, text] of files) {
    for (const link of linksOf(text)) {
      if (/^[a-z][a-z+.-]*:/i.test(link)) continue;
      const [target = '', anchor] = link.split('#') as [string, string | undefined];
      const resolved = target === '' ? path : normalize(join(dirname(path), decodeURIComponent(target)));
      if (resolved.startsWith('..') || !(files.has(resolved) || existsSync(join(root, resolved)))) {
        broken.push(`${path}: ${link}: no ${resolved}`);
        continue;
      }
      if (anchor === undefined) continue;
      if (!resolved.endsWith('.md') || (!files.has(resolved) && statSync(join(root, resolved)).isDirectory())) {
        broken.push(`${path}: ${link}: an anchor into ${resolved}, which is not a markdown file`);
        continue;
      }
      const targetText = files.get(resolved) ?? readFileSync(join(root, resolved), 'utf8');
      if (!anchorsOf(targetText).has(anchor)) broken.push(`${path}: ${link}: ${resolved} has no heading #${anchor}`);
    }
  }
  return broken;
}

/**
 * A fenced code block of a markdown file: the line its fence opens on (from 1), its language (the
 * fence's info string, `''` when it has none), its text with the fence's indentation taken off each
 * line (a block in a list item is indented), and the HTML comment on the line just before its fence
 * (`<!-- readme-file: my-agent.ts -->` gives `readme-file: my-agent.ts`), if there is one.
 */
export interface FencedBlock {
  readonly line: number;
  readonly lang: string;
  readonly body: string;
  readonly mark?: string;
}

/** Every fenced code block of `markdown`, in order; a fence that never closes fails, naming its line. */
export function fencedBlocks(markdown: string): FencedBlock[] {
  const lines = markdown.split('\n');
  const blocks: FencedBlock[] = [];
  for (let open = 0; open < lines.length; open++) {
    const fence = /^( *)```(\S*)\s*$/.exec(lines[open]!);
    if (!fence) continue;
    const close = lines.findIndex((line, index) => index > open && /^\s*```\s*$/.test(line));
    if (close < 0) throw new Error(`line ${open + 1}: a code fence that never closes`);
    const indent = fence[1]!.length;
    const body = lines.slice(open + 1, close).map((line) => line.slice(Math.min(indent, line.length - line.trimStart().length)));
    const mark = /^\s*<!--\s*(.*?)\s*-->\s*$/.exec(lines[open - 1] ?? '')?.[1];
    blocks.push({ line: open + 1, lang: fence[2]!, body: body.join('\n'), ...(mark !== undefined && { mark }) });
    open = close;
  }
  return blocks;
}
