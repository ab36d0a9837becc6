/** The recipe as Vercel's Edge runtime runs a function: a script that answers `fetch` events. */
import * as api from '../../../src/web';
import { CONTRACT_SECRET } from '../../support/contract-secret';
import { consoleLogger } from '../console-logger';
import { recipeApp } from '../recipe-app';

interface FetchEvent {
  readonly request: Request;
  respondWith(response: Promise<Response>): void;
}

// The default logger (pino on stdout) cannot run without Node's modules yet.
const app = recipeApp(api, { secret: CONTRACT_SECRET, logger: consoleLogger() });
(globalThis as unknown as { addEventListener(type: 'fetch', listener: (event: FetchEvent) => void): void }).addEventListener('fetch', (event) => {
  event.respondWith(app(event.request));
});
