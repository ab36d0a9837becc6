// The part of autocannon's API the bench uses; autocannon ships no type declarations.
declare module 'autocannon' {
  import type { EventEmitter } from 'node:events';

  interface RequestData {
    method?: string;
    path?: string;
    headers?: Record<string, string>;
    body?: string | Buffer;
  }

  interface RequestSpec extends RequestData {
    /** Called before each request is sent; returns the request to send. */
    setupRequest?: (req: RequestData, context: Record<string, unknown>) => RequestData;
  }

  interface Options {
    url: string;
    connections?: number;
    duration?: number;
    amount?: number;
    requests?: RequestSpec[];
  }

  interface Result {
    '2xx': number;
    non2xx: number;
    errors: number;
    timeouts: number;
    statusCodeStats?: Record<string, { count: number }>;
  }

  interface Instance extends EventEmitter, PromiseLike<Result> {
    stop(): void;
  }

  function autocannon(options: Options): Instance;
  export = autocannon;
}
