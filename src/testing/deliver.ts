import type { Test } from 'supertest';
import type { App } from 'supertest/types';
import { createNodeHandler } from '../adapters/node/node-handler';
import type { Middleware } from '../adapters/node/express-middleware';
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

/**
 * Where the deliver helpers post: an app or server, or a webhook itself (`svcBoardWebhook(...)`),
 * which is then served alone at its own `path`.
 */
export type DeliverTarget = App | Middleware;

/** A webhook as a node:http listener at its own path; anything else as it is. */
function target(app: DeliverTarget, fallbackPath: string, path: string | undefined): { app: App; path: string } {
  const own = (app as { path?: unknown }).path;
  if (typeof app === 'function' && typeof own === 'string') {
    try {
      return { app: createNodeHandler(app as Middleware), path: path ?? own };
    } catch {
      // A function with a `path` that is no webhook: an app of its own.
    }
  }
  return { app: app as App, path: path ?? fallbackPath };
}

/** Signs `event` as svc does and POSTs it to `app`'s board webhook (or to the webhook itself). */
export function deliverBoardEvent(app: DeliverTarget, event: object | string, options: BoardSignOptions & DeliverOptions): Test {
  const to = target(app, DEFAULT_PATHS.board, options.path);
  return postSigned(to.app, to.path, signBoardEvent(event, options));
}

/** Signs `update` as svc does and POSTs it to `app`'s bot webhook (or to the webhook itself). */
export function deliverBotUpdate(app: DeliverTarget, update: object | string, options: SignOptions & DeliverOptions): Test {
  const to = target(app, DEFAULT_PATHS.bot, options.path);
  return postSigned(to.app, to.path, signBotUpdate(update, options));
}
