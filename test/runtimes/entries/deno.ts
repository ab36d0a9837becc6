/** The recipe on Deno.serve, with every default, over the Node build (what `npm:svc-webhooks` resolves to). */
import * as api from '../../../src';
import { CONTRACT_SECRET } from '../../support/contract-secret';
import { recipeApp } from '../recipe-app';

declare const Deno: { args: string[]; serve(options: { port: number; hostname: string }, handler: (request: Request) => Promise<Response>): unknown };

Deno.serve({ port: Number(Deno.args[0]), hostname: '127.0.0.1' }, recipeApp(api, CONTRACT_SECRET));
