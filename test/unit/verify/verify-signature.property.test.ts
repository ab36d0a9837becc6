import { createHmac } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import fc from 'fast-check';
import { SvcWebhookError } from '../../../src';
import { secretKeys } from '../../../src/verify/secret-keys';
import { readBoardSignature, readBotSignature, verifyBoardSignature, verifyBotSignature } from '../../../src/verify/verify-signature';

/** A request as node:http presents it: raw header pairs in order. */
function requestWith(headers: Array<[string, string]>): IncomingMessage {
  return { rawHeaders: headers.flat(), headers: {} } as unknown as IncomingMessage;
}

const secretArb = fc.string({ minLength: 16, maxLength: 64 });
const bodyArb = fc.uint8Array({ maxLength: 512 }).map((a) => Buffer.from(a));
const NOW = 1_800_000_000_000;

function botAccepts(secret: string, header: string | string[], body: Buffer): boolean {
  const headers = (Array.isArray(header) ? header : [header]).map((h): [string, string] => ['X-Svc-Signature', h]);
  try {
    verifyBotSignature(secretKeys(secret), readBotSignature(requestWith(headers)), body);
    return true;
  } catch (err) {
    if (!(err instanceof SvcWebhookError)) throw err;
    expect(err.status).toBe(401);
    return false;
  }
}

function boardAccepts(secret: string, signature: string, timestamp: string, body: Buffer): boolean {
  try {
    const sig = readBoardSignature(
      requestWith([
        ['X-Svc-Signature', signature],
        ['X-Svc-Timestamp', timestamp],
      ]),
      300,
      NOW,
    );
    verifyBoardSignature(secretKeys(secret), sig, body);
    return true;
  } catch (err) {
    if (!(err instanceof SvcWebhookError)) throw err;
    expect(err.status).toBe(401);
    return false;
  }
}

const hmac = (secret: string, ...parts: Array<string | Buffer>) => {
  const mac = createHmac('sha256', secret);
  for (const p of parts) mac.update(p);
  return mac.digest('hex');
};

describe('bot signature verification (properties)', () => {
  it('accepts exactly the body signed with the secret', () => {
    fc.assert(fc.property(secretArb, bodyArb, (secret, body) => botAccepts(secret, `sha256=${hmac(secret, body)}`, body)));
  });

  it('refuses any other body under the same signature', () => {
    fc.assert(
      fc.property(secretArb, bodyArb, bodyArb, (secret, signed, sent) => {
        fc.pre(!signed.equals(sent));
        return !botAccepts(secret, `sha256=${hmac(secret, signed)}`, sent);
      }),
    );
  });

  it('refuses the signature of any other secret', () => {
    fc.assert(
      fc.property(secretArb, secretArb, bodyArb, (secret, other, body) => {
        fc.pre(secret !== other);
        return !botAccepts(secret, `sha256=${hmac(other, body)}`, body);
      }),
    );
  });

  it('never throws anything but a 401 SvcWebhookError on arbitrary header values', () => {
    fc.assert(
      fc.property(secretArb, fc.array(fc.string({ maxLength: 100 }), { minLength: 0, maxLength: 3 }), bodyArb, (secret, headers, body) => {
        botAccepts(secret, headers, body);
      }),
    );
  });

  it('refuses any single-character change of a good header', () => {
    fc.assert(
      fc.property(secretArb, bodyArb, fc.nat(), fc.string({ minLength: 1, maxLength: 1 }), (secret, body, at, ch) => {
        const good = `sha256=${hmac(secret, body)}`;
        const i = at % good.length;
        fc.pre(good[i]!.toLowerCase() !== ch.toLowerCase());
        return !botAccepts(secret, good.slice(0, i) + ch + good.slice(i + 1), body);
      }),
    );
  });
});

describe('board signature verification (properties)', () => {
  const tsArb = fc.integer({ min: NOW / 1000 - 300, max: NOW / 1000 + 300 }).map(String);

  it('accepts exactly timestamp "." body signed with the secret, within tolerance', () => {
    fc.assert(fc.property(secretArb, bodyArb, tsArb, (secret, body, ts) => boardAccepts(secret, `v1=${hmac(secret, ts, '.', body)}`, ts, body)));
  });

  it('refuses a signature over another timestamp or body', () => {
    fc.assert(
      fc.property(secretArb, bodyArb, tsArb, tsArb, bodyArb, (secret, body, ts, ts2, body2) => {
        fc.pre(ts !== ts2 || !body.equals(body2));
        return !boardAccepts(secret, `v1=${hmac(secret, ts, '.', body)}`, ts2, body2);
      }),
    );
  });

  it('refuses a correctly signed request outside the tolerance', () => {
    const outside = fc.oneof(fc.integer({ min: 0, max: NOW / 1000 - 301 }), fc.integer({ min: NOW / 1000 + 301, max: 99_999_999_999 })).map(String);
    fc.assert(fc.property(secretArb, bodyArb, outside, (secret, body, ts) => !boardAccepts(secret, `v1=${hmac(secret, ts, '.', body)}`, ts, body)));
  });

  it('never throws anything but a 401 SvcWebhookError on arbitrary header values', () => {
    fc.assert(
      fc.property(secretArb, fc.string({ maxLength: 80 }), fc.string({ maxLength: 20 }), bodyArb, (secret, sig, ts, body) => {
        boardAccepts(secret, sig, ts, body);
      }),
    );
  });
});
