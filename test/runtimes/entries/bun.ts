/** The recipe on Bun.serve, with every default, over the Node build (what Bun resolves `svc-webhooks` to). */
import * as api from '../../../src';
import { CONTRACT_SECRET } from '../../support/contract-secret';
import { recipeApp } from '../recipe-app';

declare const Bun: { argv: string[]; serve(options: { port: number; hostname: string; fetch: (request: Request) => Promise<Response> }): unknown };

Bun.serve({ port: Number(Bun.argv[2]), hostname: '127.0.0.1', fetch: recipeApp(api, CONTRACT_SECRET) });
