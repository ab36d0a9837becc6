import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { chmod, mkdir, open, readFile, rename } from 'node:fs/promises';
import { join } from 'node:path';
import type { Redis } from 'ioredis';

/**
 * The listeners' access tokens: one per listener name, stored as its SHA-256 only (a token is 32
 * random bytes, so a fast hash is enough: there is nothing to guess), compared in constant time,
 * shown once, when it is made. Kept in `tokens.json` under the data directory, or in a Redis hash.
 */

export const TOKEN_PREFIX = 'svcrelay_';
const NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

export interface TokenEntry {
  readonly hash: string;
  readonly createdAt: string;
}

/** Where the token hashes live. */
export interface TokenBackend {
  read(): Promise<Record<string, TokenEntry>>;
  write(name: string, entry: TokenEntry | undefined): Promise<void>;
}

export function isListenerName(name: string): boolean {
  return NAME.test(name);
}

function hashOf(token: string): Buffer {
  return createHash('sha256').update(token, 'utf8').digest();
}

/** A new token for `name`; the caller prints it once. Replaces the name's earlier token. */
export async function createToken(backend: TokenBackend, name: string, now: Date): Promise<string> {
  const token = `${TOKEN_PREFIX}${randomBytes(32).toString('base64url')}`;
  await backend.write(name, { hash: hashOf(token).toString('hex'), createdAt: now.toISOString() });
  return token;
}

/** Revokes `name`'s token; false when there was none. */
export async function revokeToken(backend: TokenBackend, name: string): Promise<boolean> {
  const entries = await backend.read();
  if (!Object.hasOwn(entries, name)) return false;
  await backend.write(name, undefined);
  return true;
}

/** Who presented a token: the listener name, and the token's hash (which token of that name it is). */
export interface TokenOwner {
  readonly name: string;
  readonly hash: string;
}

/** The listener a token belongs to, or undefined. Every entry is compared, each in constant time. */
export function tokenOwner(entries: Readonly<Record<string, TokenEntry>>, token: string): TokenOwner | undefined {
  const presented = hashOf(token);
  let owner: TokenOwner | undefined;
  for (const [name, entry] of Object.entries(entries)) {
    const stored = Buffer.from(entry.hash, 'hex');
    if (stored.length === presented.length && timingSafeEqual(stored, presented)) owner = { name, hash: entry.hash };
  }
  return owner;
}

/**
 * Whether the token `owner` presented is still valid: its name still has a token and it is the same
 * one. A name revoked and created again has a new token; streams opened with the old one are not its.
 */
export function stillValid(entries: Readonly<Record<string, TokenEntry>>, owner: TokenOwner): boolean {
  return Object.hasOwn(entries, owner.name) && entries[owner.name]!.hash === owner.hash;
}

/** tokens.json in the data directory, mode 600, replaced whole on each change. */
export function fileTokens(dir: string): TokenBackend {
  const file = join(dir, 'tokens.json');
  const read = async (): Promise<Record<string, TokenEntry>> => {
    try {
      const parsed: unknown = JSON.parse(await readFile(file, 'utf8'));
      return typeof parsed === 'object' && parsed !== null ? (parsed as Record<string, TokenEntry>) : {};
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return {};
      throw new Error(`cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? 'not JSON'}`);
    }
  };
  return {
    read,
    async write(name, entry) {
      const entries = { ...(await read()) };
      if (entry === undefined) delete entries[name];
      else entries[name] = entry;
      await mkdir(dir, { recursive: true });
      const temp = `${file}.tmp`;
      const out = await open(temp, 'w', 0o600);
      try {
        await out.writeFile(`${JSON.stringify(entries, null, 2)}\n`);
        await out.sync();
      } finally {
        await out.close();
      }
      await chmod(temp, 0o600);
      await rename(temp, file);
    },
  };
}

/** A Redis hash `<prefix>tokens`: name → the entry as JSON. */
export function redisTokens(redis: Redis, prefix: string): TokenBackend {
  const key = `${prefix}tokens`;
  return {
    async read() {
      const all = await redis.hgetall(key);
      const entries: Record<string, TokenEntry> = {};
      for (const [name, json] of Object.entries(all)) {
        try {
          entries[name] = JSON.parse(json) as TokenEntry;
        } catch {
          // A value no relay wrote is no token.
        }
      }
      return entries;
    },
    async write(name, entry) {
      if (entry === undefined) await redis.hdel(key, name);
      else await redis.hset(key, name, JSON.stringify(entry));
    },
  };
}
