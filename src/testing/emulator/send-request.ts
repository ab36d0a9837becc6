import { request as httpRequest, type ClientRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';

/** svc's success window: a 2xx within 10 seconds. */
export const DELIVERY_TIMEOUT_MS = 10_000;

/** What one POST got: the receiver's status, or why there was none; `ok` only for a 2xx in time. */
export interface SendResult {
  readonly ok: boolean;
  readonly status: number | null;
  readonly error: string | null;
}

/** How one POST is sent: its target, bytes, headers, and the connection fault chaos chose for it. */
export interface SendInput {
  readonly target: URL;
  readonly body: string;
  readonly headers: Record<string, string>;
  /** Send the body in two halves this many ms apart. */
  readonly pauseMs?: number;
  /** Cut the connection halfway through the body. */
  readonly drop?: boolean;
}

/** How much of a refusal's body lastError and the ping's error quote. */
const MAX_ERROR_TEXT = 200;

function errorText(body: string): string {
  const line = body.replace(/\s+/g, ' ').trim().slice(0, MAX_ERROR_TEXT);
  return line === '' ? '' : `: ${line}`;
}

function failure(error: string, status: number | null = null): SendResult {
  return { ok: false, status, error };
}

function write(req: ClientRequest, input: SendInput, settle: (result: SendResult) => void): void {
  const bytes = Buffer.from(input.body, 'utf8');
  const half = bytes.subarray(0, Math.floor(bytes.length / 2));
  if (input.drop === true) {
    req.write(half, () => {
      settle(failure('connection dropped before the body was sent'));
      req.destroy();
    });
    return;
  }
  if (input.pauseMs === undefined) {
    req.end(bytes);
    return;
  }
  req.write(half);
  const timer = setTimeout(() => req.end(bytes.subarray(half.length)), input.pauseMs);
  req.on('close', () => clearTimeout(timer));
}

/**
 * POSTs one delivery as svc does: redirects are not followed and count as failures, and no 2xx
 * within 10 seconds (real time, whatever the emulator's clock) is a failure. Never rejects.
 */
export function sendRequest(input: SendInput): Promise<SendResult> {
  return new Promise((resolve) => {
    let settled = false;
    const settle = (result: SendResult): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(result);
    };
    const request = input.target.protocol === 'https:' ? httpsRequest : httpRequest;
    const headers = { ...input.headers, 'Content-Length': String(Buffer.byteLength(input.body, 'utf8')) };
    const req = request(input.target, { method: 'POST', headers, agent: false }, (res) => {
      const status = res.statusCode ?? 0;
      // The start of a refusal's body says why (a receiver's error code); the rest is read and dropped.
      let head = '';
      res.on('data', (chunk: Buffer) => {
        if (head.length < MAX_ERROR_TEXT) head += chunk.toString('utf8');
      });
      res.on('end', () => {
        if (status >= 200 && status < 300) settle({ ok: true, status, error: null });
        else if (status >= 300 && status < 400) settle(failure(`redirect ${status} not followed`, status));
        else settle(failure(`receiver answered ${status}${errorText(head)}`, status));
      });
      res.on('error', () => settle(failure('the answer was cut off', status)));
    });
    const timer = setTimeout(() => {
      settle(failure('no answer within 10 s'));
      req.destroy();
    }, DELIVERY_TIMEOUT_MS);
    req.on('error', (err: NodeJS.ErrnoException) => settle(failure(`connection failed: ${err.code ?? 'error'}`)));
    write(req, input, settle);
  });
}
