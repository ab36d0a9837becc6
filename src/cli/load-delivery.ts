import { exampleByName, exampleNames, freshenDelivery } from '../testing/example-events';
import { usageError } from './cli-error';
import type { CliIo } from './cli-io';
import { applyEdits, hasEdits, type EventEdits } from './event-edits';
import { readInputFile } from './read-input';

export type Webhook = 'board' | 'bot';

/** What `send` posts: the exact body bytes, and what the headers repeat from them. */
export interface Delivery {
  readonly webhook: Webhook;
  readonly body: string;
  readonly id: string | undefined;
  /** The board event type or the bot event kind, for display and X-Svc-Event. */
  readonly kind: string | undefined;
}

/** A delivery and, when its body is a JSON object, that object (to make more deliveries from). */
export interface LoadedDelivery extends Delivery {
  readonly payload: Record<string, unknown> | undefined;
}

export interface LoadOptions {
  readonly webhook?: Webhook | undefined;
  /** Give a file's event a new id (and a bot update createdAt = now). */
  readonly fresh?: boolean;
  /** `--board`, `--set` and `--id`: applied after `fresh`. */
  readonly edits?: EventEdits | undefined;
}

function looksLikeFile(source: string): boolean {
  return source.endsWith('.json') || source.includes('/') || source.includes('\\');
}

/** Which webhook a parsed body belongs to, by the fields only that webhook has. */
function webhookOf(payload: unknown): Webhook | undefined {
  if (typeof payload !== 'object' || payload === null) return undefined;
  const p = payload as Record<string, unknown>;
  if (typeof p.type === 'string' && 'sequence' in p) return 'board';
  if (typeof p.event === 'object' && p.event !== null && 'botUserId' in p) return 'bot';
  return undefined;
}

function kindOf(payload: Record<string, unknown>, webhook: Webhook): string | undefined {
  if (webhook === 'board') return typeof payload.type === 'string' ? payload.type : undefined;
  const event = payload.event;
  return typeof event === 'object' && event !== null ? Object.keys(event)[0] : undefined;
}

function describe(payload: Record<string, unknown>, webhook: Webhook, body: string): LoadedDelivery {
  return { webhook, body, id: typeof payload.id === 'string' ? payload.id : undefined, kind: kindOf(payload, webhook), payload };
}

/** The payload edited, and sent as compact JSON (no longer the file's bytes). */
function edited(payload: Record<string, unknown>, webhook: Webhook, edits: EventEdits | undefined): LoadedDelivery {
  if (edits !== undefined) applyEdits(payload, webhook, edits);
  return describe(payload, webhook, JSON.stringify(payload));
}

/**
 * A delivery from an example name (a fresh id each time, as svc gives every event) or from a JSON
 * file (sent byte for byte, so a captured body can be replayed exactly; `fresh` gives it a new id,
 * and edits make it compact JSON).
 */
export function loadDelivery(io: CliIo, source: string, options: LoadOptions): LoadedDelivery {
  if (!looksLikeFile(source)) {
    const example = exampleByName(source);
    if (!example) throw usageError(`"${source}" is neither an example name nor a .json file; examples: ${exampleNames.join(', ')}`);
    if (options.webhook !== undefined && options.webhook !== example.webhook) {
      throw usageError(`"${source}" is a ${example.webhook} event, not a ${options.webhook} one`);
    }
    return edited(example.payload, example.webhook, options.edits);
  }
  const text = readInputFile(io, source, 'event file').toString('utf8');
  let payload: unknown;
  try {
    payload = JSON.parse(text);
  } catch {
    payload = undefined;
  }
  const webhook = options.webhook ?? webhookOf(payload);
  if (webhook === undefined) {
    throw usageError(`cannot tell whether ${source} is a board event or a bot update; pass --webhook board or --webhook bot`);
  }
  if (typeof payload !== 'object' || payload === null) {
    if (options.fresh) throw usageError(`--fresh needs a JSON object, and ${source} is not one`);
    if (options.edits !== undefined && hasEdits(options.edits)) throw usageError(`--board, --set and --id need a JSON object, and ${source} is not one`);
    return { webhook, body: text, id: undefined, kind: undefined, payload: undefined };
  }
  const object = payload as Record<string, unknown>;
  const edits = options.edits !== undefined && hasEdits(options.edits) ? options.edits : undefined;
  if (!options.fresh && edits === undefined) return describe(object, webhook, text);
  if (options.fresh) freshenDelivery(object, webhook);
  return edited(object, webhook, edits);
}
