import * as nodeCrypto from 'node:crypto';
import { nodeBuiltin } from '../../../../src/internal/runtime/node-builtins';

describe('nodeBuiltin, Node’s own modules asked of the runtime', () => {
  const process = globalThis.process as { getBuiltinModule?: unknown };
  let own: unknown;
  beforeEach(() => {
    own = process.getBuiltinModule;
  });
  afterEach(() => {
    process.getBuiltinModule = own;
  });

  it('are Node’s modules on Node', () => {
    expect(nodeBuiltin('node:crypto')?.createHmac).toBe(nodeCrypto.createHmac);
    expect(nodeBuiltin('node:buffer')?.Buffer).toBe(Buffer);
  });

  it('are absent where the runtime cannot give them (no getBuiltinModule)', () => {
    process.getBuiltinModule = undefined;
    expect(nodeBuiltin('node:crypto')).toBeUndefined();
    process.getBuiltinModule = 'not a function';
    expect(nodeBuiltin('node:crypto')).toBeUndefined();
  });

  it('are absent when the runtime throws or answers nothing for one', () => {
    process.getBuiltinModule = () => {
      throw new Error('no such module');
    };
    expect(nodeBuiltin('node:crypto')).toBeUndefined();
    process.getBuiltinModule = () => null;
    expect(nodeBuiltin('node:crypto')).toBeUndefined();
  });

  it('are absent where there is no process at all', () => {
    const descriptor = Object.getOwnPropertyDescriptor(globalThis, 'process')!;
    Object.defineProperty(globalThis, 'process', { value: undefined, configurable: true });
    try {
      expect(nodeBuiltin('node:buffer')).toBeUndefined();
    } finally {
      Object.defineProperty(globalThis, 'process', descriptor);
    }
  });
});
