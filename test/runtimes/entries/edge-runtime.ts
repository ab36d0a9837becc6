/** The recipe, with every default, as Vercel's Edge runtime runs a function: a script that answers `fetch` events. */
import * as api from '../../../src/web';
import { CONTRACT_SECRET } from '../../support/contract-secret';
import { recipeApp } from '../recipe-app';

interface FetchEvent {
  readonly request: Request;
  respondWith(response: Promise<Response>): void;
}

const app = recipeApp(api, CONTRACT_SECRET);
(globalThis as unknown as { addEventListener(type: 'fetch', listener: (event: FetchEvent) => void): void }).addEventListener('fetch', (event) => {
  event.respondWith(app(event.request));
});
