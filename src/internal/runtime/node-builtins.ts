import type * as NodeBuffer from 'node:buffer';
import type * as NodeCrypto from 'node:crypto';

/** The Node modules the pipeline uses where they exist; the types only, nothing is imported. */
interface Builtins {
  'node:buffer': typeof NodeBuffer;
  'node:crypto': typeof NodeCrypto;
}

interface ProcessWithBuiltins {
  getBuiltinModule?: (id: string) => unknown;
}

/**
 * One of Node's own modules where the runtime has them (Node 20.16 and later, Bun, Deno, workerd with
 * `nodejs_compat`), else undefined (workerd without it, Vercel's Edge runtime, browsers). It is asked
 * of the runtime, never imported: a bundle for a runtime without Node's modules names none of them.
 */
export function nodeBuiltin<K extends keyof Builtins>(id: K): Builtins[K] | undefined {
  const process = (globalThis as { process?: ProcessWithBuiltins }).process;
  try {
    // Throws where there is no process or no getBuiltinModule (Node before 20.16), or it refuses the id.
    return (process!.getBuiltinModule!(id) as Builtins[K] | null | undefined) ?? undefined;
  } catch {
    // The runtime has none to give.
  }
  return undefined;
}
