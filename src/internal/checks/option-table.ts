/**
 * One declaration per option: its type, default, bounds and one line of documentation, and how a
 * value is checked at setup. A factory reads its options through its table (`readOptions`), so the
 * table is the one list of its option names: the unknown-option check, the checks and the option
 * tables of docs/options.md (`npm run generate:options`) all come from it.
 */
export interface OptionDeclaration<T> {
  /** One line: what the option does. */
  readonly doc: string;
  /** The type, as the documentation shows it. */
  readonly type: string;
  /** The default, as the documentation shows it; absent for a required option. */
  readonly defaultText?: string;
  /** The accepted values, as the documentation shows them. */
  readonly bounds?: string;
  /** An options object of its own (`inbox`): its options, documented in a table of their own. */
  readonly nested?: OptionTable;
  /**
   * Checks one value, `undefined` when the option is absent, and returns what the library uses;
   * throws a TypeError or RangeError that names the option (`name`) and the fix.
   */
  read(value: unknown, name: string): T;
}

/** The options of one factory, by name. */
export type OptionTable = { readonly [name: string]: OptionDeclaration<unknown> };

/** What `readOptions` returns: each option as its declaration reads it. */
export type ReadOptions<T extends OptionTable> = { readonly [K in keyof T]: T[K] extends OptionDeclaration<infer V> ? V : never };

/** How a factory names its options in errors: `svcBoardWebhook`, and `inbox.` before a nested one. */
export interface OptionScope {
  /** The factory, as a user calls it: `svcBoardWebhook`, `redisStore`. */
  readonly factory: string;
  /** Prefix of the option names in errors, for a nested object: `inbox.`. */
  readonly prefix?: string;
  /** Names this version no longer takes, with the name that replaced them. */
  readonly renamed?: Readonly<Record<string, string>>;
}

/**
 * Reads `input` through `table`: an unknown name is refused with the closest known one (or the
 * name that replaced it), and every declared option is checked, absent ones included.
 */
export function readOptions<T extends OptionTable>(table: T, input: unknown, scope: OptionScope): ReadOptions<T> {
  const prefix = scope.prefix ?? '';
  if (typeof input !== 'object' || input === null || Array.isArray(input)) {
    throw new TypeError(`svc-webhooks: ${scope.factory} ${prefix === '' ? 'options' : `\`${prefix.slice(0, -1)}\``} must be an object; got ${kindOf(input)}`);
  }
  const given = input as Record<string, unknown>;
  for (const key of Object.keys(given)) {
    if (!Object.hasOwn(table, key))
      throw new TypeError(`svc-webhooks: ${scope.factory} has no option \`${prefix}${key}\`${suggestion(key, Object.keys(table), scope)}`);
  }
  const out: Record<string, unknown> = {};
  for (const name of Object.keys(table)) out[name] = table[name]!.read(given[name], `${prefix}${name}`);
  return out as ReadOptions<T>;
}

function suggestion(key: string, known: readonly string[], scope: OptionScope): string {
  const renamed = scope.renamed !== undefined && Object.hasOwn(scope.renamed, key) ? scope.renamed[key] : undefined;
  if (renamed !== undefined) return `: it was renamed \`${scope.prefix ?? ''}${renamed}\``;
  let best: string | undefined;
  let bestDistance = Math.max(2, Math.floor(key.length / 3)) + 1;
  for (const name of known) {
    // `timeout` for `timeoutMs`: the name without its unit counts as a spelling too.
    const stem = name.replace(/(Ms|Seconds|Bytes)$/, '').toLowerCase();
    const distance = Math.min(editDistance(key.toLowerCase(), name.toLowerCase()), editDistance(key.toLowerCase(), stem));
    if (distance < bestDistance) [best, bestDistance] = [name, distance];
  }
  return best === undefined ? `; the options are ${known.map((n) => `\`${n}\``).join(', ')}` : `; did you mean \`${scope.prefix ?? ''}${best}\`?`;
}

/** Levenshtein distance, for "did you mean". */
export function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) row[j] = Math.min(previous[j]! + 1, row[j - 1]! + 1, previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    previous = row;
  }
  return previous[b.length]!;
}

/**
 * What a value is, for an error message, without its content: a secret given in the wrong place
 * must not be quoted back. Numbers and booleans are shown, they are never secrets.
 */
export function kindOf(value: unknown): string {
  if (value === undefined) return 'undefined';
  if (value === null) return 'null';
  if (typeof value === 'string') return value === '' ? 'an empty string' : `a string of ${value.length} characters`;
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint') return `${typeof value} ${String(value)}`;
  if (typeof value === 'function') return 'a function';
  if (Array.isArray(value)) return value.length === 0 ? 'an empty array' : `an array of ${value.length}`;
  if (typeof value === 'symbol') return 'a symbol';
  return 'an object';
}

/** What a number option measures; the documentation and the errors say it. */
export type NumberUnit = 'ms' | 'seconds' | 'bytes' | 'count';

const UNIT_WORDS: Record<NumberUnit, string> = { ms: 'milliseconds', seconds: 'seconds', bytes: 'bytes', count: '' };

export interface NumberOption {
  readonly doc: string;
  readonly unit: NumberUnit;
  /** The default; `undefined` makes the option optional without one (it reads as undefined). */
  readonly default: number | undefined;
  /** How the documentation shows the default, when the number alone would not say it. */
  readonly defaultText?: string;
  readonly min: number;
  /** `min` itself is refused: the value must be more than it (`more than 0`). */
  readonly minExclusive?: boolean;
  /** Default: no bound but the safe integers'. */
  readonly max?: number;
  /** Whole numbers only. Default true. */
  readonly integer?: boolean;
  /** How the documentation shows the bounds, when another option moves one (`more than timeoutMs`). */
  readonly bounds?: string;
}

/** A number within bounds, with a unit that its name also says (`…Ms`, `…Seconds`, `…Bytes`, `max…`). */
export function numberOption<D extends number | undefined>(
  spec: NumberOption & { readonly default: D },
): OptionDeclaration<D extends number ? number : number | undefined> {
  const whole = spec.integer ?? true;
  const unit = UNIT_WORDS[spec.unit];
  const max = spec.max ?? Number.MAX_SAFE_INTEGER;
  const upTo = spec.max === undefined ? '' : ` to ${spec.max}`;
  const bounds = spec.minExclusive === true ? `more than ${spec.min}${upTo}` : spec.max === undefined ? `at least ${spec.min}` : `${spec.min}${upTo}`;
  const range = `${whole ? 'an integer' : 'a number'}${unit === '' ? '' : ` of ${unit}`} ${spec.minExclusive !== true && spec.max !== undefined ? `from ${bounds}` : bounds}`;
  const shown = spec.bounds ?? bounds;
  return {
    doc: spec.doc,
    type: spec.unit === 'count' ? 'number' : `number (${unit})`,
    ...(spec.default === undefined && spec.defaultText === undefined ? {} : { defaultText: spec.defaultText ?? String(spec.default) }),
    bounds: shown,
    read(value, name) {
      if (value === undefined) return spec.default as never;
      if (
        typeof value !== 'number' ||
        !Number.isFinite(value) ||
        value < spec.min ||
        (spec.minExclusive === true && value === spec.min) ||
        value > max ||
        (whole && !Number.isInteger(value))
      ) {
        throw new RangeError(`svc-webhooks: \`${name}\` must be ${range}; got ${kindOf(value)}`);
      }
      return value as never;
    },
  };
}

/** One of a few strings. */
export function choiceOption<C extends string>(spec: { readonly doc: string; readonly choices: readonly C[]; readonly default: C }): OptionDeclaration<C> {
  const list = spec.choices.map((c) => `'${c}'`).join(', ');
  return {
    doc: spec.doc,
    type: spec.choices.map((c) => `'${c}'`).join(' | '),
    defaultText: `'${spec.default}'`,
    read(value, name) {
      if (value === undefined) return spec.default;
      if (typeof value !== 'string' || !(spec.choices as readonly string[]).includes(value))
        throw new TypeError(`svc-webhooks: \`${name}\` must be one of ${list}; got ${kindOf(value)}`);
      return value as C;
    },
  };
}

/** A function, such as a clock; absent reads as the default. */
export function functionOption<F extends (...args: never[]) => unknown>(spec: {
  readonly doc: string;
  readonly type: string;
  readonly default?: F;
  readonly defaultText?: string;
}): OptionDeclaration<F | undefined> {
  return {
    doc: spec.doc,
    type: spec.type,
    ...(spec.defaultText === undefined ? {} : { defaultText: spec.defaultText }),
    read(value, name) {
      if (value === undefined) return spec.default;
      if (typeof value !== 'function') throw new TypeError(`svc-webhooks: \`${name}\` must be a function (${spec.type}); got ${kindOf(value)}`);
      return value as F;
    },
  };
}

/** A string, or absent. `check` refuses a string the option cannot take (it throws). */
export function stringOption<D extends string | undefined>(spec: {
  readonly doc: string;
  readonly default: D;
  readonly defaultText?: string;
  readonly bounds?: string;
  readonly check?: (value: string, name: string) => void;
}): OptionDeclaration<D extends string ? string : string | undefined> {
  return {
    doc: spec.doc,
    type: 'string',
    ...(spec.default === undefined && spec.defaultText === undefined ? {} : { defaultText: spec.defaultText ?? `\`${spec.default}\`` }),
    ...(spec.bounds === undefined ? {} : { bounds: spec.bounds }),
    read(value, name) {
      if (value === undefined) return spec.default as never;
      if (typeof value !== 'string') throw new TypeError(`svc-webhooks: \`${name}\` must be a string; got ${kindOf(value)}`);
      spec.check?.(value, name);
      return value as never;
    },
  };
}

/** true or false. */
export function booleanOption(spec: { readonly doc: string; readonly default: boolean }): OptionDeclaration<boolean> {
  return {
    doc: spec.doc,
    type: 'boolean',
    defaultText: String(spec.default),
    read(value, name) {
      if (value === undefined) return spec.default;
      if (typeof value !== 'boolean') throw new TypeError(`svc-webhooks: \`${name}\` must be true or false; got ${kindOf(value)}`);
      return value;
    },
  };
}

/** Anything else: the declaration's own `read` checks it. Use when no kind above fits. */
export function customOption<T>(declaration: OptionDeclaration<T>): OptionDeclaration<T> {
  return declaration;
}
