/**
 * Fresh signed deliveries, one per call: a new id, a current timestamp and the signature of the
 * scheme the stack under test checks. They are made in the load generator for every request, so the
 * de-dup store never sees a repeat and no signature is replayed out of its tolerance window.
 */
import { createHmac, randomUUID } from 'node:crypto';
import type { BodyTemplate } from './bodies';

/** How a stack authenticates a delivery. */
export type Scheme = 'svc-board' | 'svc-bot' | 'octokit' | 'standard';

// Secrets shared by the load generator and the servers; they only ever travel over loopback.
export const SVC_SECRET = 'bench-secret-0123456789abcdef';
export const OCTOKIT_SECRET = SVC_SECRET;
export const STANDARD_SECRET = `whsec_${Buffer.from('bench-standard-webhooks-key-32b!').toString('base64')}`;
const STANDARD_KEY = Buffer.from(STANDARD_SECRET.slice('whsec_'.length), 'base64');

export interface SignedDelivery {
  readonly headers: Record<string, string>;
  /** Valid until the next call of the same factory: its bytes are reused for the next delivery. */
  readonly body: Buffer;
}

function hmac(key: string | Buffer, ...parts: Array<string | Buffer>): ReturnType<typeof createHmac> {
  const mac = createHmac('sha256', key);
  for (const part of parts) mac.update(part);
  return mac;
}

/** Writes a fresh id (and createdAt) into the template's bytes and returns the id. */
function refresh(template: BodyTemplate): string {
  const id = randomUUID();
  template.bytes.write(id, template.idOffset, 'latin1');
  if (template.createdAtOffset !== undefined) template.bytes.write(new Date().toISOString(), template.createdAtOffset, 'latin1');
  return id;
}

const JSON_TYPE = { 'Content-Type': 'application/json' };

/**
 * Returns a function that makes one fresh delivery of `template` per call. `forge` signs with a
 * wrong secret: the request is well formed and must be refused.
 */
export function deliveries(scheme: Scheme, template: BodyTemplate, forge = false): () => SignedDelivery {
  const body = template.bytes;
  const secret = forge ? 'forged-secret-0123456789abcdef' : SVC_SECRET;
  switch (scheme) {
    case 'svc-board':
      return () => {
        const id = refresh(template);
        const timestamp = String(Math.floor(Date.now() / 1000));
        const signature = hmac(secret, timestamp, '.', body).digest('hex');
        return {
          body,
          headers: {
            ...JSON_TYPE,
            'User-Agent': 'Svc-Webhook/1.0',
            'X-Svc-Webhook-Version': '1',
            'X-Svc-Event': template.kind,
            'X-Svc-Delivery': id,
            'X-Svc-Timestamp': timestamp,
            'X-Svc-Signature': `v1=${signature}`,
          },
        };
      };
    case 'svc-bot':
      return () => {
        const id = refresh(template);
        return {
          body,
          headers: { ...JSON_TYPE, 'User-Agent': 'SvcBot-Webhook/1.0', 'X-Svc-Delivery': id, 'X-Svc-Signature': `sha256=${hmac(secret, body).digest('hex')}` },
        };
      };
    case 'octokit':
      return () => {
        const id = refresh(template);
        return {
          body,
          headers: { ...JSON_TYPE, 'X-GitHub-Event': 'issues', 'X-GitHub-Delivery': id, 'X-Hub-Signature-256': `sha256=${hmac(secret, body).digest('hex')}` },
        };
      };
    case 'standard':
      return () => {
        const id = `msg_${refresh(template)}`;
        const timestamp = String(Math.floor(Date.now() / 1000));
        const key = forge ? Buffer.from(secret) : STANDARD_KEY;
        const signature = hmac(key, id, '.', timestamp, '.', body).digest('base64');
        return { body, headers: { ...JSON_TYPE, 'webhook-id': id, 'webhook-timestamp': timestamp, 'webhook-signature': `v1,${signature}` } };
      };
  }
}
