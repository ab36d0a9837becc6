/**
 * Reads the project's Markdown as a reader's tools do: fenced code blocks, headings and the anchors
 * GitHub gives them, and links. Just enough Markdown for our own pages, which keep to plain forms
 * (``` fences, `#` headings, `[text](target)` links).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';

export const root = join(__dirname, '..', '..');

/** README.md, CONTRIBUTING.md, ARCHITECTURE.md and every page under docs/, relative to the root. */
export function documentationFiles(): string[] {
  const docs = readdirSync(join(root, 'docs'), { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith('.md'))
    .map((entry) => relative(root, join(entry.parentPath, entry.name)).split('\\').join('/'));
  return ['README.md', 'CONTRIBUTING.md', 'ARCHITECTURE.md', ...docs.sort()];
}

export function read(file: string): string {
  return readFileSync(join(root, file), 'utf8');
}

/** A test file as a user would write it: the package's names instead of the paths to the sources. */
export function asUserWritesIt(file: string): string {
  return readFileSync(join(root, file), 'utf8')
    .replace(/from '(?:\.\.\/)+src\/(testing|client|watch)'/g, "from 'svc-webhooks/$1'")
    .replace(/from '(?:\.\.\/)+src'/g, "from 'svc-webhooks'")
    .trim();
}

export interface CodeBlock {
  readonly file: string;
  /** The line of the opening fence, 1-based. */
  readonly line: number;
  readonly lang: string;
  readonly code: string;
}

interface Line {
  readonly text: string;
  /** 1-based. */
  readonly number: number;
  readonly inFence: boolean;
}

/** The lines of a page, each marked whether it is inside a fenced block (fences included). */
function lines(text: string): Line[] {
  let fence: string | undefined;
  return text.split('\n').map((line, i) => {
    const opener = /^\s*(`{3,}|~{3,})/.exec(line)?.[1];
    const inFence = fence !== undefined || opener !== undefined;
    if (fence === undefined && opener !== undefined) fence = opener;
    else if (fence !== undefined && line.trim().startsWith(fence) && line.trim().replace(/[`~]/g, '') === '') fence = undefined;
    return { text: line, number: i + 1, inFence };
  });
}

export function codeBlocks(file: string): CodeBlock[] {
  const blocks: CodeBlock[] = [];
  const all = read(file).split('\n');
  for (let i = 0; i < all.length; i += 1) {
    const open = /^(\s*)(`{3,})(\S*)\s*$/.exec(all[i]!);
    if (!open) continue;
    const indent = open[1]!.length;
    const body: string[] = [];
    let j = i + 1;
    for (; j < all.length && !all[j]!.trim().startsWith(open[2]!); j += 1) body.push(all[j]!.slice(indent));
    blocks.push({ file, line: i + 1, lang: open[3]!, code: body.join('\n') });
    i = j;
  }
  return blocks;
}

export interface Heading {
  readonly level: number;
  readonly text: string;
  readonly anchor: string;
  readonly line: number;
}

/** The text a heading shows: inline code, emphasis and link targets dropped as GitHub renders them. */
function headingText(raw: string): string {
  return raw
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/`([^`]*)`/g, '$1')
    .replace(/\*\*?([^*]+)\*\*?/g, '$1')
    .trim();
}

/** GitHub's anchor of a heading (github-slugger): lower case, punctuation dropped, spaces to hyphens. */
export function slug(text: string): string {
  return text
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc}\- ]/gu, '')
    .replace(/ /g, '-');
}

export function headings(file: string): Heading[] {
  const seen = new Map<string, number>();
  const out: Heading[] = [];
  for (const line of lines(read(file))) {
    const m = /^(#{1,6})\s+(.*?)\s*#*\s*$/.exec(line.text);
    if (line.inFence || !m) continue;
    const text = headingText(m[2]!);
    const base = slug(text);
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    out.push({ level: m[1]!.length, text, anchor: count === 0 ? base : `${base}-${count}`, line: line.number });
  }
  return out;
}

export interface Link {
  readonly file: string;
  readonly line: number;
  readonly target: string;
}

/** Every `[text](target)` link outside code, with the inline code of the line blanked out first. */
export function links(file: string): Link[] {
  const out: Link[] = [];
  for (const line of lines(read(file))) {
    if (line.inFence) continue;
    const prose = line.text.replace(/`[^`]*`/g, '``');
    for (const m of prose.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) out.push({ file, line: line.number, target: m[1]! });
  }
  return out;
}

/** Repository paths named in inline code outside fences (`src/…`, `test/…`, `examples/…` and so on). */
export function codePaths(file: string): Link[] {
  const out: Link[] = [];
  for (const line of lines(read(file))) {
    if (line.inFence) continue;
    for (const m of line.text.matchAll(/`((?:src|test|examples|scripts|bench|schemas|sql|docs)\/[\w./-]+)`/g))
      out.push({ file, line: line.number, target: m[1]! });
  }
  return out;
}
