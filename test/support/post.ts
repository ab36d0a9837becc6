import request from 'supertest';
import type { SignedRequest } from './sign';

type App = Parameters<typeof request>[0];

/** POSTs a signed request exactly as signed: the body bytes are sent untouched. */
export function post(app: App, path: string, signed: SignedRequest, extraHeaders: Record<string, string | string[]> = {}) {
  let req = request(app).post(path);
  for (const [name, value] of Object.entries({ ...signed.headers, ...extraHeaders })) req = req.set(name, value as string);
  return req.send(signed.body);
}
