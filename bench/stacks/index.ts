/**
 * The stacks under test, in the order each round runs them and the tables show them: the default
 * mount first, then its peers and the floors. A stack compared with the default mount in a target
 * runs right after it, so both see the machine in the same state. Only names are listed here: each server
 * child loads just its own stack's module, so one stack's dependencies never count in another's RSS.
 */
import type { Webhook } from '../bodies';
import type { Scheme } from '../signing';

export type StackName =
  | 'node-floor'
  | 'express-floor'
  | 'svc-board-express'
  | 'svc-board-express-unlogged'
  | 'svc-board-express-pino-default'
  | 'svc-bot-express'
  | 'svc-board-node'
  | 'svc-board-front'
  | 'svc-board-web'
  | 'web-floor'
  | 'svc-board-bun'
  | 'bun-floor'
  | 'svc-board-redis'
  | 'svc-board-postgres'
  | 'svc-board-postgres-tx'
  | 'svc-board-resolver'
  | 'svc-board-node-no-otel'
  | 'svc-board-node-otel'
  | 'octokit-express'
  | 'standard-express';

export interface Stack {
  readonly name: StackName;
  readonly label: string;
  /**
   * The module under bench/stacks/ that exports `createListener(arg?)` (a node:http listener), or
   * for a stack served by Bun.serve `createFetch()`.
   */
  readonly module: string;
  /** `bun`: served by Bun.serve in a Bun child (children/bun-server.ts); node:http on node otherwise. */
  readonly runtime?: 'bun';
  readonly arg?: Webhook;
  readonly scheme: Scheme;
  /** Which body the stack receives: board events, or bot updates of the same sizes. */
  readonly webhook: Webhook;
  readonly path: string;
}

export const STACKS: readonly Stack[] = [
  {
    name: 'svc-board-express',
    label: 'svc-webhooks board, Express 5',
    module: 'svc-express',
    arg: 'board',
    scheme: 'svc-board',
    webhook: 'board',
    path: '/webhooks/board',
  },
  {
    name: 'svc-board-resolver',
    label: 'svc-webhooks board, Express 5, resolver over 10,000 boards',
    module: 'svc-resolver',
    scheme: 'svc-board',
    webhook: 'board',
    path: '/webhooks/board',
  },
  {
    name: 'svc-board-express-unlogged',
    label: 'svc-webhooks board, Express 5, logging off',
    module: 'svc-express-unlogged',
    scheme: 'svc-board',
    webhook: 'board',
    path: '/webhooks/board',
  },
  {
    name: 'svc-board-express-pino-default',
    label: "svc-webhooks board, Express 5, logging through pino()'s own destination (a write per line)",
    module: 'svc-express-pino-default',
    scheme: 'svc-board',
    webhook: 'board',
    path: '/webhooks/board',
  },
  { name: 'octokit-express', label: '@octokit/webhooks, Express 5', module: 'octokit-express', scheme: 'octokit', webhook: 'board', path: '/webhooks/board' },
  {
    name: 'standard-express',
    label: 'standardwebhooks, Express 5 route',
    module: 'standard-express',
    scheme: 'standard',
    webhook: 'board',
    path: '/webhooks/board',
  },
  {
    name: 'express-floor',
    label: 'Express floor (Express 5 app.use, by hand)',
    module: 'express-floor',
    scheme: 'svc-board',
    webhook: 'board',
    path: '/webhooks/board',
  },
  { name: 'node-floor', label: 'node floor (node:http, by hand)', module: 'node-floor', scheme: 'svc-board', webhook: 'board', path: '/webhooks/board' },
  {
    name: 'svc-bot-express',
    label: 'svc-webhooks bot, Express 5',
    module: 'svc-express',
    arg: 'bot',
    scheme: 'svc-bot',
    webhook: 'bot',
    path: '/webhooks/bot',
  },
  {
    name: 'svc-board-node',
    label: 'svc-webhooks board, node:http',
    module: 'svc-node',
    arg: 'board',
    scheme: 'svc-board',
    webhook: 'board',
    path: '/webhooks/board',
  },
  {
    name: 'svc-board-front',
    label: 'svc-webhooks board, node:http in front of Express 5',
    module: 'svc-front',
    scheme: 'svc-board',
    webhook: 'board',
    path: '/webhooks/board',
  },
  {
    name: 'svc-board-web',
    label: 'svc-webhooks board, Web handler on node:http (@hono/node-server)',
    module: 'svc-web',
    scheme: 'svc-board',
    webhook: 'board',
    path: '/webhooks/board',
  },
  {
    name: 'web-floor',
    label: 'Fetch floor (a Fetch handler by hand, on @hono/node-server)',
    module: 'web-floor',
    scheme: 'svc-board',
    webhook: 'board',
    path: '/webhooks/board',
  },
  {
    name: 'svc-board-bun',
    label: 'svc-webhooks board, Web handler on Bun.serve',
    module: 'svc-fetch',
    runtime: 'bun',
    scheme: 'svc-board',
    webhook: 'board',
    path: '/webhooks/board',
  },
  {
    name: 'bun-floor',
    label: 'Fetch floor (a Fetch handler by hand, on Bun.serve)',
    module: 'fetch-floor',
    runtime: 'bun',
    scheme: 'svc-board',
    webhook: 'board',
    path: '/webhooks/board',
  },
  {
    name: 'svc-board-redis',
    label: 'svc-webhooks board, Express 5, Redis store',
    module: 'svc-redis',
    scheme: 'svc-board',
    webhook: 'board',
    path: '/webhooks/board',
  },
  {
    name: 'svc-board-postgres',
    label: 'svc-webhooks board, Express 5, PostgreSQL store',
    module: 'svc-postgres',
    scheme: 'svc-board',
    webhook: 'board',
    path: '/webhooks/board',
  },
  {
    name: 'svc-board-postgres-tx',
    label: 'svc-webhooks board, Express 5, PostgreSQL store, row written in ctx.transaction',
    module: 'svc-postgres-tx',
    scheme: 'svc-board',
    webhook: 'board',
    path: '/webhooks/board',
  },
  {
    name: 'svc-board-node-no-otel',
    label: 'svc-webhooks board, node:http, @opentelemetry/api not installed',
    module: 'svc-node-no-otel',
    scheme: 'svc-board',
    webhook: 'board',
    path: '/webhooks/board',
  },
  {
    name: 'svc-board-node-otel',
    label: 'svc-webhooks board, node:http, OpenTelemetry SDK registered',
    module: 'svc-node-otel',
    scheme: 'svc-board',
    webhook: 'board',
    path: '/webhooks/board',
  },
];

export function stack(name: StackName): Stack {
  const found = STACKS.find((s) => s.name === name);
  if (found === undefined) throw new Error(`bench: unknown stack ${name}`);
  return found;
}
