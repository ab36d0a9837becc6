import Module from 'node:module';
import type { RequestListener } from 'node:http';
import { createListener as svcNode } from './svc-node';

/**
 * svc-webhooks board as a node:http handler in a process where `@opentelemetry/api` cannot be found,
 * as for a user who does not install the optional peer: the floor of the OpenTelemetry comparison.
 */
const resolve = (Module as unknown as { _resolveFilename: (request: string, ...rest: unknown[]) => string })._resolveFilename;
(Module as unknown as { _resolveFilename: typeof resolve })._resolveFilename = function hideOpenTelemetry(request: string, ...rest: unknown[]): string {
  if (request === '@opentelemetry/api') throw Object.assign(new Error(`Cannot find module '${request}'`), { code: 'MODULE_NOT_FOUND' });
  return resolve.call(this, request, ...rest);
};

export function createListener(): RequestListener {
  const listener = svcNode('board');
  if (Object.keys(require.cache).some((file) => file.includes('@opentelemetry'))) throw new Error('bench: @opentelemetry/api was loaded although hidden');
  return listener;
}
