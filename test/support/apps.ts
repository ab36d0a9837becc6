import express5 from 'express';
import type { Middleware } from '../../src';
import pino from 'pino';

const express4 = require('express4') as typeof express5;

/** Every Express major the library supports; integration suites run against each. */
export const expressVersions: Array<[string, typeof express5]> = [
  ['Express 5', express5],
  ['Express 4', express4],
];

export function appWith(expressLib: typeof express5, ...middleware: Middleware[]): express5.Express {
  const app = expressLib();
  for (const mw of middleware) app.use(mw);
  return app;
}

/** A logger that keeps its lines in memory, so tests can read what was logged; `options` add to level debug. */
export function memoryLogger(options: pino.LoggerOptions = {}): { logger: pino.Logger; lines: Array<Record<string, any>>; text: () => string } {
  const chunks: string[] = [];
  const logger = pino({ level: 'debug', ...options }, { write: (s: string) => void chunks.push(s) });
  return {
    logger,
    get lines() {
      return chunks.map((c) => JSON.parse(c));
    },
    text: () => chunks.join(''),
  };
}

export const silentLogger = pino({ level: 'silent' });

export { deferred } from './deferred';
