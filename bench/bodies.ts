/**
 * The request bodies of the load runs, built the same way in every process that needs them (the load
 * generator, the stage micro benchmark), so no large file is committed and every stack gets the same
 * bytes. A body is a template: its delivery id (and for bot updates, `createdAt`) sits at a known
 * offset, so a fresh delivery only overwrites those bytes instead of re-serialising the whole body.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from './paths';

export type Webhook = 'board' | 'bot';
export type BodySize = '2kb' | '256kb';

export const BODY_SIZES: readonly BodySize[] = ['2kb', '256kb'];

/** The small body is the board fixture as the sender serialises it (compact JSON, about 2.2 KB). */
const LARGE_BYTES = 250 * 1024; // just under the 256 KB the spec's receivers must accept

// A placeholder UUID that appears nowhere else in a body, so its offset is unambiguous.
const ID_SLOT = '00000000-0000-4000-8000-000000000000';
const CREATED_AT_SLOT = '2000-01-01T00:00:00.000Z';

export interface BodyTemplate {
  readonly webhook: Webhook;
  readonly size: BodySize;
  /** The event type (board) or kind (bot) of the body. */
  readonly kind: string;
  /** The body bytes; the slots below are overwritten in place for each delivery. */
  readonly bytes: Buffer;
  readonly idOffset: number;
  /** Bot updates are refused when `createdAt` is older than a day, so it is refreshed too. */
  readonly createdAtOffset?: number;
}

export function fixture(webhook: Webhook, name: string): Record<string, any> {
  return JSON.parse(readFileSync(join(ROOT, 'examples', 'fixtures', webhook, `${name}.json`), 'utf8')) as Record<string, any>;
}

// Prose with some non-ASCII characters, as a real task description or chat message has: the UTF-8
// decode and JSON.parse of a two-byte string cost more than of pure ASCII.
const SENTENCES = [
  'The nightly export gives up after the first 503 from upstream, so invoices go missing.',
  'Retry with exponential backoff (1 min, doubling, capped at 1 h) and alert #billing-ops.',
  'Steps to reproduce: run `make export` against staging with the flaky proxy enabled.',
  'Jürgen confirmed the café branch sees the same failure — see the log excerpt below.',
  'Acceptance: no invoice is lost when upstream is down for less than 24 h “in a row”.',
  '- [ ] add a metric for retries\n- [x] document the alert\n- [ ] load test with 10k invoices',
  '```\n2026-11-17T14:03:41Z export worker=3 status=503 attempt=1 next_retry=60s\n```',
  'Ship behind the `export_retry` flag first 🚀 and remove it after one clean week.',
];

function prose(bytes: number, seed: number): string {
  const parts: string[] = [];
  let length = 0;
  for (let i = 0; length < bytes; i++) {
    const part = `${SENTENCES[(i + seed) % SENTENCES.length]} (${i})${i % 5 === 4 ? '\n\n' : ' '}`;
    parts.push(part);
    length += Buffer.byteLength(part);
  }
  return parts.join('');
}

/** Grows one string field of `body` until the serialised body is exactly `target` bytes. */
function padTo(body: Record<string, any>, set: (text: string) => void, target: number): Buffer {
  set('');
  const base = Buffer.byteLength(JSON.stringify(body));
  let text = prose(Math.max(0, target - base), 3);
  set(text);
  // Drop whole characters from the end until the body fits, then pad with ASCII to land exactly.
  let over = Buffer.byteLength(JSON.stringify(body)) - target;
  while (over > 0) {
    // The last character (a surrogate pair counts as one), as many bytes as it takes escaped in JSON.
    const last = /[\uDC00-\uDFFF]$/.test(text) ? text.slice(-2) : text.slice(-1);
    over -= Buffer.byteLength(JSON.stringify(last)) - 2;
    text = text.slice(0, -last.length);
  }
  set(text + '.'.repeat(-over));
  const bytes = Buffer.from(JSON.stringify(body));
  if (bytes.length !== target) throw new Error(`bench: a body came out ${bytes.length} bytes, not ${target}`);
  return bytes;
}

/** A task.updated event: the small one is the fixture; the large one is a bulk edit of a long task. */
function boardBody(size: BodySize): Buffer {
  const event = fixture('board', 'task.updated');
  event.id = ID_SLOT;
  if (size === '2kb') return Buffer.from(JSON.stringify(event));
  // A long description and a long journal (a checklist reworked in one transaction) make a big event.
  const changes = [event.changes[0]];
  for (let i = 0; i < 200; i++) {
    changes.push({
      field: 'checklist',
      before: { checklist_id: `c${i}`, text: `Item ${i}: ${SENTENCES[i % SENTENCES.length]}`, done: false },
      after: { checklist_id: `c${i}`, text: `Item ${i}: ${SENTENCES[(i + 1) % SENTENCES.length]}`, done: i % 3 === 0 },
    });
  }
  event.changes = changes;
  event.task.label_ids = Array.from({ length: 40 }, (_, i) => `5214698d-e61b-499c-a4fe-${String(i).padStart(12, '0')}`);
  return padTo(event, (text) => (event.task.description = text), LARGE_BYTES);
}

/** A messageCreate update whose message is as long as the board body of the same size. */
function botBody(size: BodySize, boardBytes: number): Buffer {
  const update = fixture('bot', 'messageCreate');
  update.id = ID_SLOT;
  update.createdAt = CREATED_AT_SLOT;
  return padTo(update, (text) => (update.event.messageCreate.message.content = text), size === '2kb' ? boardBytes : LARGE_BYTES);
}

function slot(bytes: Buffer, text: string): number {
  const at = bytes.indexOf(text);
  if (at === -1 || bytes.indexOf(text, at + 1) !== -1) throw new Error(`bench: the slot ${text} must appear exactly once in a body`);
  return at;
}

const cache = new Map<string, BodyTemplate>();

/** The template for a webhook and size; built once per process. */
export function bodyTemplate(webhook: Webhook, size: BodySize): BodyTemplate {
  const key = `${webhook}/${size}`;
  let template = cache.get(key);
  if (template === undefined) {
    if (webhook === 'board') {
      const bytes = boardBody(size);
      template = { webhook, size, kind: 'task.updated', bytes, idOffset: slot(bytes, ID_SLOT) };
    } else {
      const bytes = botBody(size, bodyTemplate('board', size).bytes.length);
      template = { webhook, size, kind: 'messageCreate', bytes, idOffset: slot(bytes, ID_SLOT), createdAtOffset: slot(bytes, CREATED_AT_SLOT) };
    }
    cache.set(key, template);
  }
  return template;
}
