import { createHmac } from 'node:crypto';
import fc from 'fast-check';
import { boardEvent, botUpdate, boardSignature, botSignature, signBoardEvent, signBotUpdate } from '../../src/testing';

const SECRET = 'signing-test-secret-0123456789';

/** The spec's formulas, computed here once more so the helpers are checked against the text. */
const hex = (...parts: string[]) => parts.reduce((mac, part) => mac.update(part), createHmac('sha256', SECRET)).digest('hex');

describe('signBoardEvent', () => {
  it('sends every header of the board sender, with v1=HMAC(timestamp.body)', () => {
    const event = boardEvent('task.updated');
    const signed = signBoardEvent(event, { secret: SECRET, timestamp: 1_795_000_000 });
    expect(signed.body).toBe(JSON.stringify(event));
    expect(signed.headers).toEqual({
      'Content-Type': 'application/json',
      'User-Agent': 'Svc-Webhook/1.0',
      'X-Svc-Webhook-Version': '1',
      'X-Svc-Event': 'task.updated',
      'X-Svc-Delivery': event.id,
      'X-Svc-Timestamp': '1795000000',
      'X-Svc-Signature': `v1=${hex('1795000000', '.', signed.body)}`,
    });
  });

  it('signs a string body byte for byte', () => {
    const body = '{ "id": "x",\n  "type": "ping" }';
    const signed = signBoardEvent(body, { secret: SECRET, timestamp: 1 });
    expect(signed.body).toBe(body);
    expect(signed.headers['X-Svc-Signature']).toBe(`v1=${hex('1', '.', body)}`);
    expect(signed.headers['X-Svc-Event']).toBe('ping');
  });

  it('stamps the current time by default', () => {
    const signed = signBoardEvent(boardEvent('ping'), { secret: SECRET });
    expect(Math.abs(Number(signed.headers['X-Svc-Timestamp']) - Date.now() / 1000)).toBeLessThan(5);
  });

  it('lets a test pin the delivery id and the event header', () => {
    const signed = signBoardEvent(boardEvent('ping'), { secret: SECRET, deliveryId: 'other', eventType: 'task.created' });
    expect(signed.headers).toMatchObject({ 'X-Svc-Delivery': 'other', 'X-Svc-Event': 'task.created' });
  });

  it('requires a secret', () => {
    expect(() => signBoardEvent(boardEvent('ping'), {} as never)).toThrow(TypeError);
  });

  it('matches the spec formula for any body and timestamp', () => {
    fc.assert(
      fc.property(fc.string(), fc.integer({ min: 0, max: 2 ** 40 }), (body, ts) => {
        expect(boardSignature(SECRET, ts, body)).toBe(`v1=${hex(String(ts), '.', body)}`);
      }),
    );
  });
});

describe('signBotUpdate', () => {
  it('sends the bot sender headers, with sha256=HMAC(body) and no timestamp', () => {
    const update = botUpdate('messageCreate');
    const signed = signBotUpdate(update, { secret: SECRET });
    expect(signed.headers).toEqual({
      'Content-Type': 'application/json',
      'User-Agent': 'SvcBot-Webhook/1.0',
      'X-Svc-Delivery': update.id,
      'X-Svc-Signature': `sha256=${hex(signed.body)}`,
    });
  });

  it('matches the spec formula for any body', () => {
    fc.assert(fc.property(fc.string(), (body) => expect(botSignature(SECRET, body)).toBe(`sha256=${hex(body)}`)));
  });
});
