import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { read } from './markdown';

/** The rows of docs/security.md's "What a handler may trust" table: the field, then the verdict. */
function trustTable(): Map<string, string> {
  const text = read('docs/security.md');
  const start = text.indexOf('### What a handler may trust');
  expect(start).toBeGreaterThan(-1);
  const section = text.slice(start, text.indexOf('\n### ', start + 1));
  const rows = new Map<string, string>();
  for (const line of section.split('\n')) {
    const cells = /^\| `([^`]+)` \|(.*)\|(.*)\|$/.exec(line);
    if (cells) rows.set(cells[1]!, cells[3]!.trim());
  }
  return rows;
}

/**
 * The fields of a board event that name a board or a workspace, from the schema: whatever a handler
 * might key tenant data by. Each must have its verdict in the table.
 */
function tenantFields(): string[] {
  const schema = JSON.parse(readFileSync(join(__dirname, '..', '..', 'schemas', 'board-webhook-event.schema.json'), 'utf8')) as {
    $defs: Record<string, { properties?: Record<string, unknown> }>;
  };
  const where: Record<string, string> = { BoardEventEnvelope: '', Board: 'board.', Task: 'task.' };
  const out: string[] = [];
  for (const [def, prefix] of Object.entries(where)) {
    for (const name of Object.keys(schema.$defs[def]!.properties ?? {})) {
      const tenant = def === 'Board' ? name === 'id' || name === 'key' : name === 'board_id' || name === 'workspace_id' || (def === 'Task' && name === 'key');
      if (tenant) out.push(`${prefix}${name}`);
    }
  }
  return out;
}

describe('docs/security.md: what a handler may trust', () => {
  it('gives a verdict for ctx.boardId and every field of a board event that names a board or a workspace', () => {
    const table = trustTable();
    const fields = ['ctx.boardId', ...tenantFields()];
    expect(fields).toEqual(expect.arrayContaining(['board.id', 'board.key', 'workspace_id', 'task.board_id', 'task.workspace_id', 'task.key']));
    for (const field of fields) expect([field, table.get(field)]).toEqual([field, expect.stringMatching(/^(yes|no|as far as)/)]);
  });

  it('says not to trust the fields the receiver cannot check: board.key and workspace_id', () => {
    const table = trustTable();
    expect(table.get('board.key')).toMatch(/^no/);
    expect(table.get('workspace_id')).toMatch(/^no/);
  });
});
