import { SvcWebhookError } from '../../src';
import { handlerFailure, storeRefusal } from '../../src/receive/handler-failure';

describe('the answer to a delivery whose handlers failed', () => {
  it('is 500 handler_failed, with what the handler threw as cause', () => {
    for (const thrown of [new Error('boom'), new SvcWebhookError('store_unavailable', 'not from the transaction'), 'text', undefined]) {
      const answer = handlerFailure(thrown);
      expect([answer.code, answer.status, answer.cause]).toEqual(['handler_failed', 500, thrown]);
    }
  });

  it('is the refusal itself when the store raised it inside the handler\'s transaction', () => {
    const busy = new SvcWebhookError('delivery_in_progress', 'another attempt holds it');
    expect(storeRefusal(busy)).toBe(busy);
    expect(handlerFailure(busy)).toBe(busy);
  });
});
