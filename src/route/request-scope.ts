import type { IncomingMessage } from 'node:http';
import type { RequestAccess } from '../receive/request-access';

/** The request as a handler or an error handler sees it: `req` (Node) and `request` (Fetch). */
export class RequestScope {
  readonly #source: unknown;
  readonly #access: RequestAccess<unknown>;
  #request: Request | undefined;

  constructor(source: unknown, access: RequestAccess<never>) {
    this.#source = source;
    this.#access = access as RequestAccess<unknown>;
  }

  get req(): IncomingMessage {
    return this.#access.nodeRequest(this.#source);
  }

  get request(): Request {
    return (this.#request ??= this.#access.fetchRequest(this.#source));
  }
}
