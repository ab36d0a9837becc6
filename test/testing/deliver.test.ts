import express from 'express';
import { svcBoardWebhook, svcBotWebhook } from '../../src';
import { boardEvent, botUpdate, deliverBoardEvent, deliverBotUpdate, postSigned, signBoardEvent, silentLogger } from '../../src/testing';

const SECRET = 'deliver-test-secret-0123456789';

describe('deliver helpers', () => {
  const handled: string[] = [];
  const board = svcBoardWebhook({ secret: SECRET, logger: silentLogger }).onAny((event) => void handled.push(event.id));
  const bot = svcBotWebhook({ secret: SECRET, logger: silentLogger, path: '/hooks/bot' }).onAny((_data, ctx) => void handled.push(ctx.deliveryId));
  const app = express().use(board).use(bot);

  beforeEach(() => {
    handled.length = 0;
  });

  it('deliver a signed board event in one call', async () => {
    const event = boardEvent('task.archived');
    await deliverBoardEvent(app, event, { secret: SECRET }).expect(200);
    expect(handled).toEqual([event.id]);
  });

  it('take the webhook itself, with its type, and post to its own path', async () => {
    const own = svcBoardWebhook({ secret: SECRET, logger: silentLogger, path: '/hooks/board' }).onAny((event) => void handled.push(event.id));
    const event = boardEvent('task.created');
    await deliverBoardEvent(own, event, { secret: SECRET }).expect(200);
    const update = botUpdate('eventRsvp');
    await deliverBotUpdate(bot, update, { secret: SECRET }).expect(200);
    expect(handled).toEqual([event.id, update.id]);
  });

  it('post to a custom path', async () => {
    const update = botUpdate('eventRsvp');
    await deliverBotUpdate(app, update, { secret: SECRET, path: bot.path }).expect(200);
    expect(handled).toEqual([update.id]);
  });

  it('let a test check the wrong-secret path', async () => {
    const response = await deliverBoardEvent(app, boardEvent('ping'), { secret: 'some-other-secret-0123456789' }).expect(401);
    expect(response.body).toMatchObject({ ok: false, code: 'signature_mismatch' });
    expect(handled).toEqual([]);
  });

  it('let a test check a stale timestamp', async () => {
    const response = await deliverBoardEvent(app, boardEvent('ping'), { secret: SECRET, timestamp: Math.floor(Date.now() / 1000) - 301 }).expect(401);
    expect(response.body.code).toBe('timestamp_out_of_tolerance');
  });

  it('post a signed delivery that a test has tampered with', async () => {
    const signed = signBoardEvent(boardEvent('ping'), { secret: SECRET });
    const response = await postSigned(app, board.path, { ...signed, body: signed.body.replace('"ping"', '"pong"') }).expect(401);
    expect(response.body.code).toBe('signature_mismatch');
  });

  it('answer a repeat as a duplicate', async () => {
    const event = boardEvent('task.restored');
    await deliverBoardEvent(app, event, { secret: SECRET }).expect(200, { ok: true });
    await deliverBoardEvent(app, event, { secret: SECRET }).expect(200, { ok: true, duplicate: true });
    expect(handled).toEqual([event.id]);
  });
});
