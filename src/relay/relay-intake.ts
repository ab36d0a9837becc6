import type { IncomingMessage } from 'node:http';
import { checkContentHeaders, readRawBody } from '../capture/read-raw-body';
import { SvcWebhookError } from '../errors';
import type { Delivery } from '../internal/delivery/delivery';
import { pathPattern } from '../internal/request/path-pattern';
import { parseJson } from '../parse/parse-json';
import { boardDelivery } from '../validate/board-delivery';
import { BOT_UPDATE_MAX_AGE_MS, botDeliveryCheck } from '../validate/bot-delivery';
import type { DeliveryCheck } from '../validate/delivery-checks';
import { schemaRefusal } from '../validate/delivery-checks';
import { boardVerifier, botVerifier, type Verifier } from '../verify/verify-signature';
import { keptHeaders, type IncomingDelivery, type WebhookKind } from './relay-record';
import type { RelaySecrets } from './relay-secrets';

/**
 * The relay's check of one delivery, the receivers' stages in their order with the receivers' own
 * modules: content headers, signature headers (before the body is read), the body within the
 * limit, the MAC, strict JSON, the schema and the delivery checks. What passes is what a receiver
 * with the same secrets would accept; a refusal is the SvcWebhookError a receiver answers with.
 */

/** The paths svc delivers to on the relay, as a receiver's defaults; a map of bots names the bot in the path. */
export const RELAY_PATHS = { board: '/webhooks/board', bot: '/webhooks/bot', bots: '/webhooks/bots/:botId' } as const;

export interface IntakeSettings {
  readonly webhook: WebhookKind;
  readonly secrets: RelaySecrets;
  readonly maxBodyBytes: number;
  readonly toleranceSeconds: number;
}

/** One webhook's check: `intake(req)` resolves to the delivery to store, or rejects with the refusal. */
export interface Intake {
  readonly webhook: WebhookKind;
  /** The path it answers. */
  readonly path: string;
  matches(pathname: string): boolean;
  intake(req: IncomingMessage, nowMs: number): Promise<IncomingDelivery>;
}

interface Stages<S, D extends Delivery> {
  readonly verifier: Verifier<S>;
  readonly check: DeliveryCheck<D>;
  readonly scope: (delivery: D) => string;
}

export function relayIntake(settings: IntakeSettings): Intake {
  const { webhook, secrets } = settings;
  if (webhook === 'board') {
    const pattern = pathPattern(RELAY_PATHS.board, []);
    return build(settings, pattern.path, (p) => pattern.match(p) !== undefined, {
      verifier: boardVerifier({ secrets: secrets.source, pattern, toleranceSeconds: settings.toleranceSeconds }),
      check: boardDelivery,
      scope: (d) => d.boardId,
    });
  }
  // One bot secret: the fixed path; a map of bots: the path names the bot whose secret verifies.
  const pattern = pathPattern(secrets.source.lookup === undefined ? RELAY_PATHS.bot : RELAY_PATHS.bots, ['botId']);
  return build(settings, pattern.path, (p) => pattern.match(p) !== undefined, {
    verifier: botVerifier(secrets.source, pattern),
    check: botDeliveryCheck(BOT_UPDATE_MAX_AGE_MS),
    scope: (d) => d.botId,
  });
}

function build<S, D extends Delivery>(settings: IntakeSettings, path: string, matches: (p: string) => boolean, stages: Stages<S, D>): Intake {
  const { webhook, maxBodyBytes } = settings;
  return {
    webhook,
    path,
    matches,
    async intake(req, nowMs) {
      checkContentHeaders(req);
      const signature = stages.verifier.readSignature(req, nowMs);
      const body = await readRawBody(req, maxBodyBytes);
      const verified = await stages.verifier.verify(signature, body, req);
      const payload = parseJson(body);
      const refusal = schemaRefusal(webhook, payload, 'reject', undefined);
      if (refusal !== undefined) throw refusal;
      const delivery = stages.check(payload, { request: req, verified, nowMs });
      return {
        webhook,
        id: delivery.id,
        type: delivery.kind,
        scope: stages.scope(delivery),
        receivedAt: nowMs,
        headers: keptHeaders(req.headers),
        body: body.toString('utf8'),
      };
    },
  };
}

/** An error of the pipeline itself, not of the delivery: answered 500 as a receiver does. */
export function asRefusal(err: unknown): SvcWebhookError {
  return err instanceof SvcWebhookError ? err : new SvcWebhookError('internal_error', 'internal error', { cause: err });
}
