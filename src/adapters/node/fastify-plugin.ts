import type { IncomingMessage } from 'node:http';
import type { Outcome } from '../../receive/receiver';
import type { Middleware } from './express-middleware';
import { receiverOf } from '../webhook-receiver';
import { readOptions, stringOption } from '../../internal/checks/option-table';
import { requestPathname } from '../../internal/request/path-pattern';
import { isSigned } from './misrouted';
import { NODE_REQUEST } from './node-request';

/** The parts of a Fastify instance the plugin uses (Fastify 4 and 5). */
export interface FastifyInstanceLike {
  removeAllContentTypeParsers(): unknown;
  addContentTypeParser(type: string, parser: (request: unknown, payload: unknown, done: (err: Error | null, body?: unknown) => void) => void): unknown;
  post(path: string, handler: (request: { readonly raw: IncomingMessage }, reply: FastifyReplyLike) => Promise<unknown>): unknown;
  /** The prefix the plugin was registered with (`fastify.register(plugin, { prefix })`). */
  readonly prefix?: string;
  setNotFoundHandler?(handler: (request: { readonly raw: IncomingMessage; readonly url: string }, reply: FastifyReplyLike) => unknown): unknown;
}

/** The parts of a Fastify reply the plugin uses. */
export interface FastifyReplyLike {
  code(status: number): FastifyReplyLike;
  header(name: string, value: string): FastifyReplyLike;
  send(body: string): FastifyReplyLike;
}

/** Options of `fastifyWebhook(webhook, options)`. */
export interface FastifyWebhookOptions {
  /** The route's path; default the webhook's `path`. */
  path?: string;
}

/** The declaration of every `fastifyWebhook()` option (docs/options.md is made from it). */
export const FASTIFY_WEBHOOK_OPTIONS = {
  path: stringOption({ doc: "The route's path, under the prefix the plugin is registered with.", default: undefined, defaultText: "the webhook's `path`" }),
};

/** A Fastify plugin: `fastify.register(fastifyWebhook(board))`. */
export type FastifyWebhookPlugin = (instance: FastifyInstanceLike, options: unknown, done: (err?: Error) => void) => void;

/**
 * A webhook as a Fastify plugin: one POST route at the webhook's path. Inside the plugin's own
 * context (Fastify encapsulates it, so the app's other routes keep their parsers) no body parser
 * runs: the route hands the untouched request stream to the pipeline, which reads the exact bytes
 * within `limit`. The answers are the Express mount's.
 */
export function fastifyWebhook(webhook: Middleware, options: FastifyWebhookOptions = {}): FastifyWebhookPlugin {
  const receiver = receiverOf(webhook, 'fastifyWebhook');
  const path = readOptions(FASTIFY_WEBHOOK_OPTIONS, options, { factory: 'fastifyWebhook' }).path ?? receiver.path;
  return function svcFastifyWebhook(instance, _options, done) {
    instance.removeAllContentTypeParsers();
    // Every media type reaches the route untouched: the pipeline answers 415 itself.
    instance.addContentTypeParser('*', (_request, _payload, parsed) => parsed(null));
    instance.post(path, async (request, reply) => {
      const outcome = await receiver.receive(request.raw, NODE_REQUEST);
      return sendReply(reply, outcome);
    });
    // Under a prefix, a signed POST to another path of it is answered 404 as Fastify would, with
    // one warning naming both paths. (At the root, the app's own 404 handler stays untouched.)
    if (instance.prefix !== undefined && instance.prefix !== '' && instance.setNotFoundHandler !== undefined) {
      const mounted = `${instance.prefix}${path === '/' ? '' : path}`;
      instance.setNotFoundHandler((request, reply) => {
        if (isSigned(request.raw)) receiver.misrouted(requestPathname(request.raw), [mounted]);
        const method = request.raw.method ?? 'GET';
        return reply
          .code(404)
          .header('content-type', 'application/json; charset=utf-8')
          .send(JSON.stringify({ message: `Route ${method}:${request.url} not found`, error: 'Not Found', statusCode: 404 }));
      });
    }
    done();
  };
}

function sendReply(reply: FastifyReplyLike, outcome: Outcome): FastifyReplyLike {
  reply.code(outcome.status).header('content-type', 'application/json; charset=utf-8');
  if (outcome.retryAfter !== undefined) reply.header('retry-after', String(outcome.retryAfter));
  if (outcome.closeConnection) reply.header('connection', 'close');
  return reply.send(outcome.body);
}
