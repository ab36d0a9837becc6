import type { IncomingMessage, ServerResponse } from 'node:http';
import { headerValues } from '../../internal/request/headers';
import { requestPathname } from '../../internal/request/path-pattern';
import type { WebhookReceiver } from '../webhook-receiver';

type MountedRequest = IncomingMessage & { baseUrl?: string };

/** The webhooks a signed POST passed on another path than theirs, the first of which logs. */
interface Passed {
  readonly receiver: WebhookReceiver;
  readonly answers: string[];
}

const passed = new WeakMap<IncomingMessage, Passed>();

/** Whether the request carries svc's signature header: a delivery, for this webhook or another. */
export function isSigned(req: IncomingMessage): boolean {
  return req.method === 'POST' && headerValues(req, 'x-svc-signature').length > 0;
}

/**
 * A signed POST goes past this webhook (its path is another): if nothing answers it but a 404,
 * the first webhook it passed logs one warning naming the path it came on and the paths the
 * webhooks it passed answer. A delivery another webhook (or route) answered is no warning.
 */
export function notePassedBy(req: IncomingMessage, res: ServerResponse, receiver: WebhookReceiver): void {
  const mounted = `${(req as MountedRequest).baseUrl ?? ''}${receiver.path === '/' ? '' : receiver.path}` || '/';
  const seen = passed.get(req);
  if (seen !== undefined) {
    if (!seen.answers.includes(mounted)) seen.answers.push(mounted);
    return;
  }
  const record: Passed = { receiver, answers: [mounted] };
  passed.set(req, record);
  res.once('finish', () => {
    if (res.statusCode === 404) record.receiver.misrouted(requestPathname(req), record.answers);
  });
}
