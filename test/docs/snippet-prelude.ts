/**
 * What the documentation's code blocks may use without declaring it: the names a fragment stands
 * in for (your Express app, a webhook made elsewhere, your database), each typed as the page means
 * it. A block that declares a name itself shadows the one here. A file of its own in the snippets'
 * program, kept as text so that these globals never reach the project's own type-check.
 *
 * Bun, Deno, Prisma and Drizzle are not installed here: the few members of theirs the pages call
 * are declared by hand below, as their documentation gives them, so the blocks are checked for our
 * side of the call (what `deliveryDoneSql` and `createWebHandler` give them).
 */
export const SNIPPET_PRELUDE = `
import type { Express } from 'express';
import type { Server } from 'node:http';
import type { Logger } from 'pino';
import type { Pool } from 'pg';
import type { BoardWebhookMiddleware, BotWebhookMiddleware, BoardEventMap, BoardContext, DeliveryStore } from 'svc-webhooks';

declare global {
  /** Your Express app. */
  const app: Express;
  /** The HTTP server your app listens on. */
  const server: Server;
  /** A board webhook made as in the quick start. */
  const board: BoardWebhookMiddleware;
  /** A bot webhook. */
  const bot: BotWebhookMiddleware;
  /** A de-dup store made as on its page. */
  const store: DeliveryStore & { close(): Promise<void> };
  /** The webhook secret. */
  const secret: string;
  /** A pino logger. */
  const logger: Logger;
  /** A request's raw body and headers, as received. */
  const body: string | Buffer;
  const headers: Record<string, string | string[] | undefined>;
  /** Your database: a pg Pool. */
  const db: Pool;
  const pool: Pool;
  /** A board id and a bot id. */
  const boardId: string;
  const botId: string;
  /** A map of bot ids to their webhook secrets. */
  const botSecrets: Map<string, string>;
  /** Application functions the examples call. */
  function saveTask(task: BoardEventMap['task.created']['task']): Promise<void>;
  function createInvoice(task: BoardEventMap['task.created']['task'], options: { idempotencyKey: string }): Promise<void>;
  /** A handler's event and context, for recipes written as the body of a handler. */
  const event: BoardEventMap['task.created'];
  const ctx: BoardContext<BoardEventMap['task.created']>;

  /** Bun's server, as bun.sh documents Bun.serve. */
  const Bun: { serve(options: { port?: number; fetch(request: Request): Response | Promise<Response> }): unknown };
  /** Deno's server, as deno.com documents Deno.serve. */
  const Deno: { serve(handler: (request: Request) => Response | Promise<Response>): unknown };

  /** A Prisma client with a task model, as Prisma generates it (interactive transactions, raw queries). */
  interface PrismaTx {
    task: { create(args: { data: { id: string; title: string } }): Promise<unknown> };
    $queryRawUnsafe(query: string, ...values: unknown[]): Promise<unknown>;
  }
  const prisma: { $transaction<T>(work: (tx: PrismaTx) => Promise<T>): Promise<T> };
  /** A Drizzle database (node-postgres driver) and its tasks table. */
  const drizzleDb: {
    transaction<T>(work: (tx: { insert(table: unknown): { values(row: object): Promise<unknown> }; execute(query: unknown): Promise<unknown> }) => Promise<T>): Promise<T>;
  };
  const tasks: unknown;
}

export {};
`;

/** Modules the pages import that are not installed here; a script of its own, so these are ambient declarations. */
export const SNIPPET_AMBIENT_MODULES = `
declare module 'drizzle-orm' {
  interface SQL {
    readonly queryChunks: unknown[];
  }
  /** drizzle-orm's sql tag, with sql.raw and sql.join as its documentation gives them. */
  export const sql: {
    (strings: TemplateStringsArray, ...params: unknown[]): SQL;
    raw(text: string): SQL;
    join(chunks: SQL[], separator?: SQL): SQL;
  };
}
`;
