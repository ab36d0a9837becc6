import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { boardEventTypes, botEventKinds, errorStatus } from '../../src';
import { clientErrorCodes } from '../../src/client';
import { codeBlocks, headings, read, root, type Heading } from './markdown';

/** The `### \`name\`` headings under the `## …` heading that starts with `part`, with their text. */
function sections(file: string, part: string): Map<string, string> {
  const all = headings(file);
  const lines = read(file).split('\n');
  const isCodeName = (h: Heading): boolean => /^###\s+`[^`]+`\s*$/.test(lines[h.line - 1]!);
  const start = all.findIndex((h) => h.level === 2 && h.text.startsWith(part));
  if (start < 0) throw new Error(`${file} has no section "${part}"`);
  const end = all.findIndex((h, i) => i > start && h.level <= 2);
  const within = all.slice(start + 1, end < 0 ? undefined : end).filter((h) => h.level === 3);
  const out = new Map<string, string>();
  within.forEach((h: Heading, i) => {
    const next = within[i + 1]?.line ?? (end < 0 ? lines.length + 1 : all[end]!.line);
    if (isCodeName(h)) out.set(h.text, lines.slice(h.line, next - 1).join('\n'));
  });
  return out;
}

/** The status a section gives on its first line: `**401** · …`. */
function statusOf(text: string): number | undefined {
  const first = text.trim().split('\n')[0] ?? '';
  const m = /^\*\*(\d{3})\*\*/.exec(first);
  return m ? Number(m[1]) : undefined;
}

describe('docs/errors.md', () => {
  const delivery = sections('docs/errors.md', 'Delivery errors');

  it.each(Object.entries(errorStatus))('has a section for `%s` that gives its status, %i, when it happens and what to do', (code, status) => {
    const text = delivery.get(code);
    expect(text).toBeDefined();
    expect(statusOf(text!)).toBe(status);
    expect(text).toMatch(/\*\*When:\*\*/);
    expect(text).toMatch(/\*\*What to do:\*\*/);
  });

  it('lists every code in its summary table, with its status, and no code the library does not have', () => {
    const rows = [...read('docs/errors.md').matchAll(/^\| \[`(\w+)`\]\(#(\w+)\) \| (\d{3}) \|/gm)];
    expect(rows.map((m) => [m[1], Number(m[3])]).sort()).toEqual(Object.entries(errorStatus).sort());
    for (const m of rows) expect(m[2]).toBe(m[1]);
  });

  it('documents no delivery error code the library does not have', () => {
    expect([...delivery.keys()].sort()).toEqual(Object.keys(errorStatus).sort());
  });

  it('documents every code a mount answers by itself (a JSON answer written in src/), with its status', () => {
    const mounts = sections('docs/errors.md', 'Answers of the mounts');
    const written = new Set<string>();
    for (const file of readdirSync(join(root, 'src'), { recursive: true, withFileTypes: true })) {
      if (!file.isFile() || !file.name.endsWith('.ts')) continue;
      for (const m of readFileSync(join(file.parentPath, file.name), 'utf8').matchAll(/"code":"(\w+)"/g)) written.add(m[1]!);
    }
    const own = [...written].filter((code) => !(code in errorStatus)).sort();
    expect(own).toEqual([...mounts.keys()].sort());
    expect(statusOf(mounts.get('method_not_allowed')!)).toBe(405);
    expect(statusOf(mounts.get('not_found')!)).toBe(404);
  });

  it('has a section for every code of the setup client, and no other', () => {
    const client = sections('docs/errors.md', 'Setup client errors');
    expect([...client.keys()].sort()).toEqual([...clientErrorCodes].sort());
    for (const text of client.values()) expect(text).toMatch(/\*\*When:\*\*/);
  });
});

describe('docs/events.md', () => {
  const board = sections('docs/events.md', 'Board events');
  const bot = sections('docs/events.md', 'Bot events');
  const examples = codeBlocks('docs/events.md');

  /** Whether a section holds a TypeScript block that registers a handler for `name`. */
  const hasTypedExample = (text: string, name: string, registrar: string): boolean =>
    examples.some((b) => b.lang === 'ts' && text.includes(b.code) && b.code.includes(`${registrar}.on('${name}'`));

  it.each([...boardEventTypes])('has a section for the board event type `%s`: when svc sends it, its fields, a typed handler', (type) => {
    const text = board.get(type);
    expect(text).toBeDefined();
    expect(text).toMatch(/\*\*When svc sends it:\*\*/);
    expect(text).toMatch(/\*\*Fields/);
    expect(hasTypedExample(text!, type, 'board')).toBe(true);
  });

  it.each([...botEventKinds])('has a section for the bot event kind `%s`: when svc sends it, its fields, a typed handler', (kind) => {
    const text = bot.get(kind);
    expect(text).toBeDefined();
    expect(text).toMatch(/\*\*When svc sends it:\*\*/);
    expect(text).toMatch(/\*\*Fields/);
    expect(hasTypedExample(text!, kind, 'bot')).toBe(true);
  });

  it('documents no board type or bot kind the library does not have', () => {
    expect([...board.keys()].sort()).toEqual([...boardEventTypes].sort());
    expect([...bot.keys()].sort()).toEqual([...botEventKinds].sort());
  });
});
