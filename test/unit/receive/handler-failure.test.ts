import { SvcWebhookError } from '../../../src';
import { handlerFailure } from '../../../src/receive/handler-failure';
import { storeRefusal } from '../../../src/dedup/store-refusal';

describe('the answer to a delivery whose handlers failed', () => {
  it('is 500 handler_failed, with what the handler threw as cause', () => {
    for (const thrown of [
      new Error('boom'),
      new SvcWebhookError('store_unavailable', 'not from the transaction'),
      'text',
      undefined,
      null,
      0,
      1n,
      Symbol('thrown'),
    ]) {
      const answer = handlerFailure(thrown);
      expect([answer.code, answer.status, answer.cause]).toEqual(['handler_failed', 500, thrown]);
    }
  });

  it('never touches a hostile value the handler threw', () => {
    const trap = () => {
      throw new Error('touched');
    };
    const hostile = new Proxy({}, { get: trap, has: trap, getPrototypeOf: trap, ownKeys: trap, getOwnPropertyDescriptor: trap });
    const answer = handlerFailure(hostile);
    expect([answer.code, answer.status]).toEqual(['handler_failed', 500]);
    expect(answer.cause).toBe(hostile);
  });

  it("is the refusal itself when the store raised it inside the handler's transaction", () => {
    const busy = new SvcWebhookError('delivery_in_progress', 'another attempt holds it');
    expect(storeRefusal(busy)).toBe(busy);
    expect(handlerFailure(busy)).toBe(busy);
  });
});
