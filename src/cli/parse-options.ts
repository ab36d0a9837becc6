import { parseArgs, type ParseArgsConfig } from 'node:util';
import { isTimerDelay, MAX_TIMEOUT_MS } from '../client/svc-client';
import { usageError } from './cli-error';

type OptionsConfig = NonNullable<ParseArgsConfig['options']>;

type ValueOf<C> = C extends { type: 'boolean' } ? (C extends { multiple: true } ? boolean[] : boolean) : C extends { multiple: true } ? string[] : string;

export interface Parsed<O extends OptionsConfig> {
  values: { [K in keyof O]?: ValueOf<O[K]> };
  positionals: string[];
}

/** Options that take a secret must never be named `--token`: a token on the command line lands in shell history. */
function refuseTokenFlag(args: readonly string[]): void {
  if (args.some((arg) => arg === '--token' || arg.startsWith('--token='))) {
    throw usageError(
      '--token is not accepted: a token on the command line ends up in shell history and process lists; set the environment variable or use --token-file',
    );
  }
}

/**
 * Commands that register a webhook's secret with svc take it from a file or the environment only: a
 * value on the command line is visible to every user of the machine in process lists (`ps`) and
 * stays in shell history. The value is never echoed.
 */
function refuseSecretFlag(args: readonly string[]): void {
  if (args.some((arg) => arg === '--secret' || arg.startsWith('--secret='))) {
    throw usageError(
      '--secret is not accepted here: a secret on the command line is visible in process lists (ps) and stays in shell history; write it to a file and pass --secret-file <file>, or set SVC_BOARD_WEBHOOK_SECRET (bot: SVC_BOT_WEBHOOK_SECRET) or SVC_WEBHOOK_SECRET',
    );
  }
}

/**
 * util.parseArgs that accepts `--help` on every command (the runner answers it), its errors turned
 * into one-line usage errors that name the option but never echo a value.
 */
export function parseOptions<O extends OptionsConfig>(command: string, args: readonly string[], options: O): Parsed<O> {
  refuseTokenFlag(args);
  if (!('secret' in options)) refuseSecretFlag(args);
  try {
    const { values, positionals } = parseArgs({
      args: [...args],
      options: { ...options, help: { type: 'boolean', short: 'h' } },
      allowPositionals: true,
      strict: true,
    });
    // `--help` is answered by the command runner before a command parses its options.
    return { values: values as Parsed<O>['values'], positionals };
  } catch (err) {
    throw usageError(`${describeParseError(err)} (see svc-webhooks ${command} --help)`);
  }
}

function describeParseError(err: unknown): string {
  const code = (err as { code?: unknown }).code;
  const message = err instanceof Error ? err.message : String(err);
  const option = /'(-{1,2}[^' ]+)/.exec(message)?.[1];
  if (code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION') return `unknown option ${option ?? ''}`.trim();
  if (code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE' && message.includes('does not take an argument')) return `${option ?? 'an option'} takes no value`;
  if (code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE') return `${option ?? 'an option'} needs a value (write --name=value when the value starts with "-")`;
  if (code === 'ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL') return 'unexpected argument';
  return 'invalid arguments';
}

export function oneOf<T extends string>(value: string | undefined, allowed: readonly T[], name: string): T | undefined {
  if (value === undefined) return undefined;
  if (!(allowed as readonly string[]).includes(value)) throw usageError(`${name} must be one of ${allowed.join(', ')}`);
  return value as T;
}

/** A timeout: whole milliseconds, at most what a timer takes (a longer one would fire at once). */
export function wholeMilliseconds(value: string | undefined, name: string): number | undefined {
  if (value === undefined) return undefined;
  // Digits only: Number() would also take "1e3", "0x10" and an empty text.
  const n = /^\s*\d+\s*$/.test(value) ? Number(value) : Number.NaN;
  if (!isTimerDelay(n)) throw usageError(`${name} must be a whole number of milliseconds from 1 to ${MAX_TIMEOUT_MS}`);
  return n;
}

export function positiveNumber(value: string | undefined, name: string): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (value.trim() === '' || !Number.isFinite(n) || n <= 0) throw usageError(`${name} must be a positive number`);
  return n;
}

/** A whole number from `min` to `max`, in digits (Number() would also take "1e3", "0x10" and an empty text). */
export function wholeNumber(value: string | undefined, name: string, range: { min: number; max: number }): number | undefined {
  if (value === undefined) return undefined;
  const n = /^\s*\d{1,10}\s*$/.test(value) ? Number(value) : Number.NaN;
  if (!(n >= range.min && n <= range.max)) throw usageError(`${name} must be a whole number from ${range.min} to ${range.max}`);
  return n;
}

/** A fraction from 0 to 1, in decimal digits (0.25, .5, 1). */
export function fraction(value: string | undefined, name: string): number | undefined {
  if (value === undefined) return undefined;
  const n = /^\s*(\d+(\.\d*)?|\.\d+)\s*$/.test(value) ? Number(value) : Number.NaN;
  if (!(n >= 0 && n <= 1)) throw usageError(`${name} must be a fraction from 0 to 1, such as 0.2`);
  return n;
}
