/**
 * An Edge function, as Vercel's Edge runtime runs one, whose webhook de-duplicates in Redis over
 * REST. The endpoint and token are put in by the bundler (`define`), as a deploy puts in env values.
 */
import * as api from '../../../src/web';
import { CONTRACT_SECRET } from '../../support/contract-secret';

declare const REST_URL: string;
declare const REST_TOKEN: string;

interface FetchEvent {
  readonly request: Request;
  respondWith(response: Promise<Response> | Response): void;
}

let handled = 0;
const store = api.redisRestStore({ url: REST_URL, token: REST_TOKEN, commandTimeoutMs: 10_000 });
const handle = api.createWebHandler(
  api.svcBoardWebhook({ secret: CONTRACT_SECRET, store }).onAny(async () => {
    handled++;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }),
);

(globalThis as unknown as { addEventListener(type: 'fetch', listener: (event: FetchEvent) => void): void }).addEventListener('fetch', (event) => {
  event.respondWith(new URL(event.request.url).pathname === '/handled' ? new Response(String(handled)) : handle(event.request));
});
