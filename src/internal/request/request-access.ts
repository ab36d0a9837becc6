import type { IncomingMessage } from 'node:http';
import type { NodeHeaderSource } from './headers';

/**
 * What the pipeline reads of a request besides its body: the headers, the path (for a path that
 * names the board or bot) and, under Express, the route's parameters. A Node request has all of it
 * itself; a Fetch Request gets a small view.
 */
export interface RequestFacts extends NodeHeaderSource {
  readonly url?: string;
  readonly originalUrl?: string;
  readonly params?: Record<string, unknown>;
  readonly socket?: { readonly remoteAddress?: string } | null;
}

/**
 * How the pipeline reads one kind of request: a Node `IncomingMessage` or a Fetch `Request`. Each
 * adapter has one constant of it and passes it with every request, so the receiver takes either
 * without allocating anything per request.
 */
export interface RequestAccess<R> {
  /** The headers and path: a Node request itself (its raw list keeps a repeated header apart), or a view of a Fetch Request. */
  facts(req: R): RequestFacts;
  /** The path and query, for logs. */
  url(req: R): string;
  /**
   * The body's exact bytes, at most `limit` (declared or streamed); rejects with a SvcWebhookError
   * (body_too_large, body_read_failed, body_timeout, body_already_consumed). The one seam through
   * which every body is read.
   */
  readBody(req: R, limit: number): Promise<Uint8Array>;
  /** False while body bytes may still be on their way: the answer then asks to close the connection. */
  complete(req: R): boolean;
  /** `ctx.req`: the Node request, if there is one. */
  nodeRequest(req: R): IncomingMessage | undefined;
  /** `ctx.request`: the Fetch request. */
  fetchRequest(req: R): Request;
}
