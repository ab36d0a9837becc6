import { SvcWebhookError } from '../../../src/errors';
import { answerOf, outcomeHeaders } from '../../../src/receive/outcome';

describe('the headers of an answer', () => {
  it('name the JSON media type, and no Allow nor Retry-After when the answer has none', () => {
    const headers = new Headers(outcomeHeaders(answerOf('handled')));
    expect(headers.get('content-type')).toMatch(/^application\/json/);
    expect(headers.has('allow')).toBe(false);
    expect(headers.has('retry-after')).toBe(false);
  });

  it('name the methods allowed when told them, and the seconds to wait of a refusal that has them', () => {
    const refused = answerOf(new SvcWebhookError('delivery_in_progress', 'being handled', { retryAfter: 5 }));
    const headers = new Headers(outcomeHeaders(refused, 'POST'));
    expect([headers.get('allow'), headers.get('retry-after')]).toEqual(['POST', '5']);
  });
});
