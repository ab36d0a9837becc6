/**
 * The request headers in any of the forms a delivery arrives with: a Node request (its raw header
 * list), a Fetch `Headers`, or a plain object (Node's `req.headers`, a serverless event's headers).
 */
export type HeaderSource = NodeHeaderSource | FetchHeaderSource | PlainHeaders;

/**
 * A request with headers: a Node `IncomingMessage` (its raw list keeps a repeated header apart), or
 * any object whose `headers` is a plain object or a Fetch `Headers`.
 */
export interface NodeHeaderSource {
  readonly rawHeaders?: readonly string[];
  readonly headers: PlainHeaders | FetchHeaderSource;
}

export interface FetchHeaderSource {
  get(name: string): string | null;
}

export type PlainHeaders = { readonly [name: string]: string | readonly string[] | number | undefined };

// An Express request has a `get` method too: a `headers` object tells a request apart from headers.
function isRequest(source: HeaderSource): source is NodeHeaderSource {
  const headers = (source as NodeHeaderSource).headers as unknown;
  return typeof headers === 'object' && headers !== null;
}

function isPlainObject(value: unknown): value is PlainHeaders {
  return typeof value === 'object' && value !== null && typeof (value as FetchHeaderSource).get !== 'function';
}

function isFetchSource(source: HeaderSource): source is FetchHeaderSource {
  return typeof (source as FetchHeaderSource).get === 'function';
}

/**
 * Every value a header was sent with, in order. Node joins repeated unknown headers with ", ",
 * which would hide a second signature, so a Node request's raw header list is read instead. A
 * Fetch `Headers` and a plain object keep only the joined text: there the values are split at
 * commas, which no svc header value contains, so a repeat is still seen as one.
 */
export function headerValues(source: HeaderSource, lowerName: string): string[] {
  const raw = (source as NodeHeaderSource).rawHeaders;
  if (raw !== undefined && raw.length > 0) {
    const values: string[] = [];
    for (let i = 0; i < raw.length; i += 2) {
      const name = raw[i]!;
      if (name.length === lowerName.length && name.toLowerCase() === lowerName) values.push(raw[i + 1]!);
    }
    return values;
  }
  const headers = isRequest(source) ? source.headers : source;
  if (isRequest(source) && isPlainObject(headers)) return plainValues(headers, lowerName, false);
  if (isFetchSource(headers)) {
    const value = headers.get(lowerName);
    return value === null ? [] : splitJoined(value);
  }
  return plainValues(headers as PlainHeaders, lowerName, true);
}

/** The header as one text (repeats joined with ", "), or undefined when it is absent. */
export function headerText(source: HeaderSource, lowerName: string): string | undefined {
  // One read of a Node request's `headers`: inside Express every property read on `req` is dearer.
  const nodeHeaders = (source as NodeHeaderSource).headers as unknown;
  if (isPlainObject(nodeHeaders)) {
    // Node spells each name there once, in lower case: one look-up. A request made by hand (no raw
    // list) may spell a name in any case, as headerValues reads it too.
    const raw = (source as NodeHeaderSource).rawHeaders;
    if (raw === undefined || raw.length === 0) return joined(plainValues(nodeHeaders, lowerName, false));
    const value = nodeHeaders[lowerName];
    return value === undefined ? undefined : Array.isArray(value) ? value.join(', ') : String(value);
  }
  const headers = isRequest(source) ? source.headers : source;
  if (isFetchSource(headers)) return headers.get(lowerName) ?? undefined;
  return joined(plainValues(headers as PlainHeaders, lowerName, false));
}

function joined(values: readonly string[]): string | undefined {
  return values.length === 0 ? undefined : values.join(', ');
}

/** The value of a header that must be sent once, or undefined when it is absent or repeated. */
export function singleHeader(source: HeaderSource, lowerName: string): string | undefined {
  const values = headerValues(source, lowerName);
  return values.length === 1 ? values[0] : undefined;
}

/** A plain object may spell a name in any case, and may spell it twice: every spelling counts. */
function plainValues(headers: PlainHeaders, lowerName: string, split: boolean): string[] {
  const values: string[] = [];
  for (const name of Object.keys(headers)) {
    if (name.length !== lowerName.length || name.toLowerCase() !== lowerName) continue;
    const value = headers[name];
    if (value === undefined) continue;
    for (const one of Array.isArray(value) ? value : [String(value)]) values.push(...(split ? splitJoined(one) : [one]));
  }
  return values;
}

function splitJoined(value: string): string[] {
  return value.includes(',') ? value.split(',').map((part) => part.trim()) : [value];
}
