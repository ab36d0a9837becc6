/**
 * The inspector's panel of webhook states: what svc reports for each webhook the server watches
 * (`watchWebhooks`), served as JSON at `<path>/webhooks` and drawn by `webhook-panel.js`. Both are
 * routes of the inspector's own router, added after its access check, so they answer whom the rest
 * of the inspector answers. Only the fields the panel shows are sent: never a token or a secret
 * (the watcher's statuses hold none), and the URL without its query.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Request, Response } from 'express';
import type { WebhookStatus } from '../../src/watch';
import type { DeliveryInspector } from './delivery-inspector';

/** What the panel reads: a watcher, or why there is none. */
export type PanelSource = { readonly statuses: () => WebhookStatus[] } | { readonly off: string };

/** One webhook as the panel shows it. */
export interface PanelRow {
  readonly webhook: 'board' | 'bot';
  readonly boardId?: string;
  readonly state: WebhookStatus['state'];
  readonly since: string;
  readonly checkedAt: string;
  readonly pending?: number | string;
  readonly summary: string;
}

export function mountWebhookPanel(inspector: DeliveryInspector, source: PanelSource): void {
  const script = readFileSync(join(__dirname, 'webhook-panel.js'), 'utf8');
  inspector.router.get(`${inspector.path}/webhooks`, (_req: Request, res: Response) => {
    const body = 'off' in source ? { watching: false, note: source.off, webhooks: [] } : { watching: true, webhooks: source.statuses().map(row) };
    res.set({ 'Cache-Control': 'no-store', 'Content-Type': 'application/json; charset=utf-8' }).send(JSON.stringify(body));
  });
  inspector.router.get(`${inspector.path}/webhook-panel.js`, (_req: Request, res: Response) => {
    res.set({ 'Content-Type': 'text/javascript; charset=utf-8', 'Cache-Control': 'no-store', 'X-Content-Type-Options': 'nosniff' }).send(script);
  });
}

/** The fields shown, copied by name. */
function row(status: WebhookStatus): PanelRow {
  return {
    webhook: status.webhook,
    ...(status.webhook === 'board' ? { boardId: status.boardId } : {}),
    state: status.state,
    since: new Date(status.since).toISOString(),
    checkedAt: new Date(status.checkedAt).toISOString(),
    ...(status.pending === undefined ? {} : { pending: status.pending }),
    summary: status.summary,
  };
}
