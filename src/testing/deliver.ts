import type { Test } from 'supertest';
import type { App } from 'supertest/types';
import { DEFAULT_PATHS } from '../webhooks/webhook-options';
import { signBoardEvent, signBotUpdate, type BoardSignOptions, type SignOptions, type SignedDelivery } from './sign-delivery';

/** Options of `deliverBoardEvent` and `deliverBotUpdate`: how the test delivery is signed and where it goes. */
export interface DeliverOptions {
  /** The path the webhook is mounted at; default `/webhooks/board` or `/webhooks/bot`. */
  path?: string;
}

type SupertestFactory = (app: App) => { post(path: string): Test };

/** supertest is loaded on first use, so the signing helpers work without it installed. */
function supertest(): SupertestFactory {
  try {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    return require('supertest') as SupertestFactory;
  } catch (err) {
    throw new Error('svc-webhooks/testing: the deliver helpers need supertest (npm install --save-dev supertest)', { cause: err });
  }
}

/**
 * POSTs a signed delivery, exactly its bytes and headers, to `app` (an Express app, a node:http
 * handler or server). Returns the supertest Test, so `.expect(200)` chains.
 */
export function postSigned(app: App, path: string, signed: SignedDelivery): Test {
  return supertest()(app).post(path).set(signed.headers).send(signed.body);
}

/** Signs `event` as svc does and POSTs it to `app`'s board webhook. */
export function deliverBoardEvent(app: App, event: object | string, options: BoardSignOptions & DeliverOptions): Test {
  return postSigned(app, options.path ?? DEFAULT_PATHS.board, signBoardEvent(event, options));
}

/** Signs `update` as svc does and POSTs it to `app`'s bot webhook. */
export function deliverBotUpdate(app: App, update: object | string, options: SignOptions & DeliverOptions): Test {
  return postSigned(app, options.path ?? DEFAULT_PATHS.bot, signBotUpdate(update, options));
}
