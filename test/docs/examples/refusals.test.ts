import express from 'express';
import { svcBoardWebhook } from '../../../src';
import { boardEvent, deliverBoardEvent, postSigned, signBoardEvent, silentLogger } from '../../../src/testing';

const secret = 'test-secret-at-least-16-chars';
const app = express().use(svcBoardWebhook({ secret, logger: silentLogger }));

test('refuses what svc did not sign', async () => {
  // a wrong secret: 401 signature_mismatch, and no handler runs
  await deliverBoardEvent(app, boardEvent('ping'), { secret: 'not-the-secret-0123456' }).expect(401);
  // a stale timestamp: 401 timestamp_out_of_tolerance
  await deliverBoardEvent(app, boardEvent('ping'), { secret, timestamp: Math.floor(Date.now() / 1000) - 301 }).expect(401);
  // a body changed after signing: 401 signature_mismatch
  const signed = signBoardEvent(boardEvent('ping'), { secret });
  const response = await postSigned(app, '/webhooks/board', { ...signed, body: signed.body.replace('ENG', 'OPS') }).expect(401);
  expect(response.body.code).toBe('signature_mismatch');
});
