import express from 'express';
import { boardEventTypes, botEventKinds, svcBoardWebhook, svcBotWebhook } from '../../src';
import { boardEvent, botCommand, botUpdate, deliverBoardEvent, deliverBotUpdate, exampleBoardTypes, exampleBotKinds, silentLogger } from '../../src/testing';

const SECRET = 'example-events-secret-0123456789';
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe('example events', () => {
  it('cover every board event type and bot event kind', () => {
    expect([...exampleBoardTypes].sort()).toEqual([...boardEventTypes].sort());
    expect([...exampleBotKinds].sort()).toEqual([...botEventKinds].sort());
  });

  describe('boardEvent', () => {
    it('gives every event a fresh UUID id', () => {
      const a = boardEvent('task.created');
      const b = boardEvent('task.created');
      expect(a.id).toMatch(UUID);
      expect(a.id).not.toBe(b.id);
    });

    it('merges overrides deeply, replaces arrays and keeps the rest', () => {
      const event = boardEvent('task.created', { task: { title: 'Ship it', label_ids: ['l1'] }, actor: null });
      expect(event.task.title).toBe('Ship it');
      expect(event.task.label_ids).toEqual(['l1']);
      expect(event.task.key).toBe('ENG-42');
      expect(event.actor).toBeNull();
    });

    it('lets a test pin the id', () => {
      expect(boardEvent('ping', { id: 'fixed' }).id).toBe('fixed');
    });

    it('never shares state between events', () => {
      const a = boardEvent('task.updated');
      a.task.label_ids.push('mutated');
      a.changes.length = 0;
      const b = boardEvent('task.updated');
      expect(b.task.label_ids).not.toContain('mutated');
      expect(b.changes.length).toBeGreaterThan(0);
    });

    it('refuses an unknown type', () => {
      expect(() => boardEvent('task.exploded' as never)).toThrow(/no example board event type "task.exploded"/);
    });
  });

  describe('botUpdate and botCommand', () => {
    it('give a fresh id and createdAt = now', () => {
      const update = botUpdate('taskCreate');
      expect(update.id).toMatch(UUID);
      expect(Math.abs(Date.parse(update.createdAt) - Date.now())).toBeLessThan(5_000);
    });

    it('merge data into the event member and pin envelope fields', () => {
      const update = botUpdate('messageCreate', { message: { content: 'hello' } }, { botUserId: 'b1' });
      expect(update.event.messageCreate.message.content).toBe('hello');
      expect(update.event.messageCreate.message.roomId).toMatch(UUID);
      expect(update.botUserId).toBe('b1');
    });

    it('build a command addressed to the bot of the update', () => {
      const update = botCommand('deploy', 'staging --dry-run', undefined, { botUserId: 'b2' });
      expect(update.event.messageCreate.message).toMatchObject({
        content: '/deploy staging --dry-run',
        command: { botUserId: 'b2', name: 'deploy', args: 'staging --dry-run' },
      });
    });
  });

  describe('are accepted by the receivers', () => {
    const seen: string[] = [];
    const board = svcBoardWebhook({ secret: SECRET, logger: silentLogger }).onAny((event) => void seen.push(event.type));
    const bot = svcBotWebhook({ secret: SECRET, logger: silentLogger }).onAny((_data, ctx) => void seen.push(ctx.kind));
    const app = express().use(board).use(bot);

    it.each([...boardEventTypes])('board %s', async (type) => {
      await deliverBoardEvent(app, boardEvent(type), { secret: SECRET }).expect(200, { ok: true });
      expect(seen.at(-1)).toBe(type);
    });

    it.each([...botEventKinds])('bot %s', async (kind) => {
      await deliverBotUpdate(app, botUpdate(kind), { secret: SECRET }).expect(200, { ok: true });
      expect(seen.at(-1)).toBe(kind);
    });

    it('bot command', async () => {
      await deliverBotUpdate(app, botCommand('ping'), { secret: SECRET }).expect(200);
    });
  });

  it('are typed by their type and kind', () => {
    const moved = boardEvent('task.moved_out');
    const title: string = boardEvent('task.created').task.title;
    const content: string = botUpdate('messageCreate').event.messageCreate.message.content;
    // @ts-expect-error a moved-out task has only id, key and board_id
    void moved.task.title;
    // @ts-expect-error unknown board event type
    expect(() => boardEvent('task.exploded')).toThrow();
    // @ts-expect-error a title is a string
    boardEvent('task.created', { task: { title: 1 } });
    expect(typeof title + typeof content).toBe('stringstring');
  });
});
