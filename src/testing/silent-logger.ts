import pino from 'pino';

/** A pino logger that writes nothing: pass it as `logger` to keep test output clean. */
export const silentLogger = pino({ level: 'silent' });
