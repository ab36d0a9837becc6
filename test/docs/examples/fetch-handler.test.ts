import { createWebHandler, svcBoardWebhook } from '../../../src';
import { boardEvent, signBoardEvent, silentLogger } from '../../../src/testing';

const secret = 'test-secret-at-least-16-chars';

test('the route answers a signed delivery', async () => {
  const POST = createWebHandler(svcBoardWebhook({ secret, logger: silentLogger }));
  const { body, headers } = signBoardEvent(boardEvent('ping'), { secret });
  const response = await POST(new Request('http://localhost/api/webhooks/board', { method: 'POST', headers, body }));
  expect(response.status).toBe(200);
});
