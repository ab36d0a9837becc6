import { printable } from '../internal/logging/printable';
import type { SvcTime } from './watch-types';

/** Before this (2001-09-09), a number is taken for seconds since the epoch; from it on, for ms. */
const MS_FROM = 1e12;
/** Readings outside these years are taken for a misread format, not for a time. */
const EARLIEST_MS = Date.UTC(2000, 0, 1);
const LATEST_AHEAD_MS = 366 * 24 * 60 * 60 * 1000;
const MAX_RAW = 64;

// ISO 8601 / RFC 3339 with a date and a time, and an offset or none (then UTC, as svc's are).
const ISO = /^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2})(?::(\d{2})(\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})?$/i;
// RFC 7231's HTTP date: Sun, 06 Nov 1994 08:49:37 GMT
const HTTP_DATE = /^[A-Z][a-z]{2}, \d{2} [A-Z][a-z]{2} \d{4} \d{2}:\d{2}:\d{2} GMT$/;
const DIGITS = /^\d{1,16}(\.\d+)?$/;

/**
 * A timestamp of svc's webhook state, read whatever its format (the spec does not give it): an ISO
 * 8601 text, an HTTP date, seconds or milliseconds since the epoch (as a number or a text of
 * digits), or a protobuf Timestamp object `{ seconds, nanos }`. Anything else keeps its raw text and
 * no time: the state it belongs to still counts (a `failingSince` that cannot be read is failing),
 * only the times derived from it are unknown. Undefined for null or absent.
 */
export function readSvcTime(value: unknown, now: number): SvcTime | undefined {
  if (value === null || value === undefined) return undefined;
  const raw = rawText(value);
  return { raw, ms: plausible(parse(value), now) };
}

function parse(value: unknown): number | undefined {
  if (typeof value === 'number') return fromEpoch(value);
  if (typeof value === 'string') {
    const text = value.trim();
    if (DIGITS.test(text)) return fromEpoch(Number(text));
    const iso = ISO.exec(text);
    if (iso) return Date.parse(`${iso[1]}-${iso[2]}-${iso[3]}T${iso[4]}:${iso[5]}:${iso[6] ?? '00'}${(iso[7] ?? '').slice(0, 4)}${offset(iso[8])}`);
    if (HTTP_DATE.test(text)) return Date.parse(text);
    return undefined;
  }
  if (typeof value === 'object' && !Array.isArray(value)) {
    const { seconds, nanos } = value as { seconds?: unknown; nanos?: unknown };
    const s = typeof seconds === 'string' && /^\d{1,12}$/.test(seconds) ? Number(seconds) : seconds;
    if (typeof s !== 'number' || !Number.isInteger(s)) return undefined;
    return s * 1000 + (typeof nanos === 'number' && Number.isFinite(nanos) ? Math.floor(nanos / 1e6) : 0);
  }
  return undefined;
}

function offset(text: string | undefined): string {
  if (text === undefined || text.toUpperCase() === 'Z') return 'Z';
  return text.includes(':') ? text : `${text.slice(0, 3)}:${text.slice(3)}`;
}

function fromEpoch(n: number): number | undefined {
  if (!Number.isFinite(n) || n < 0) return undefined;
  return n < MS_FROM ? Math.round(n * 1000) : Math.round(n);
}

function plausible(ms: number | undefined, now: number): number | undefined {
  if (ms === undefined || Number.isNaN(ms)) return undefined;
  return ms >= EARLIEST_MS && ms <= now + LATEST_AHEAD_MS ? ms : undefined;
}

function rawText(value: unknown): string {
  let text: string;
  try {
    text = typeof value === 'string' ? value : (JSON.stringify(value) ?? String(value));
  } catch {
    text = 'a value that cannot be shown';
  }
  return printable(text, MAX_RAW);
}
