import { bodyBytes, concatBytes, joinBody } from '../../../src/capture/body-bounds';

const bytes = (...b: number[]) => Uint8Array.from(b);

describe('joining a body’s chunks', () => {
  it('concatBytes (where there is no Buffer) joins chunks of any size in order', () => {
    const joined = concatBytes([bytes(1, 2), bytes(), bytes(3), bytes(4, 5, 6)], 6);
    expect(joined).toBeInstanceOf(Uint8Array);
    expect(Array.from(joined)).toEqual([1, 2, 3, 4, 5, 6]);
  });

  it('concatBytes copies views from their own first byte', () => {
    const whole = bytes(9, 9, 1, 2, 9);
    expect(Array.from(concatBytes([whole.subarray(2, 4), bytes(3)], 3))).toEqual([1, 2, 3]);
  });

  it('joinBody gives the same bytes on Node, as a Buffer', () => {
    const joined = joinBody([bytes(1, 2), bytes(3)], 3, 3);
    expect(Buffer.isBuffer(joined)).toBe(true);
    expect(Array.from(joined)).toEqual([1, 2, 3]);
  });

  it('bodyBytes is a Buffer view of a chunk on Node: the same memory, not a copy', () => {
    const chunk = bytes(9, 1, 2, 9).subarray(1, 3);
    const view = bodyBytes(chunk);
    expect(Buffer.isBuffer(view)).toBe(true);
    expect(Array.from(view)).toEqual([1, 2]);
    chunk[0] = 7;
    expect(view[0]).toBe(7);
  });
});
