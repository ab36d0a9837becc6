import fc from 'fast-check';
import type { SvcWebhookError } from '../../../src';
import { parseJson } from '../../../src/parse/parse-json';

// Keys and values as a sender may spell them: plain, or with any of their characters as a `\u` escape.
const NAMES = ['a', 'task', '__proto__', 'constructor', 'proto', '_constructor', 'prototype'];
const FORBIDDEN = new Set(['__proto__', 'constructor']);

const spelled = (name: string) =>
  fc
    .array(fc.boolean(), { minLength: name.length, maxLength: name.length })
    .map((escape) => [...name].map((ch, i) => (escape[i] ? `\\u${ch.charCodeAt(0).toString(16).padStart(4, '0')}` : ch)).join(''));

interface Node {
  readonly text: string;
  readonly forbidden: boolean;
}

const leaf: fc.Arbitrary<Node> = fc.oneof(
  fc.integer().map((n) => ({ text: String(n), forbidden: false })),
  // A value may name a forbidden key: only keys count.
  fc.constantFrom(...NAMES).chain((name) => spelled(name).map((s) => ({ text: `"${s}"`, forbidden: false }))),
);

const { tree } = fc.letrec<{ tree: Node }>((tie) => ({
  tree: fc.oneof(
    { depthSize: 'small' },
    leaf,
    fc.array(tie('tree'), { maxLength: 3 }).map((items) => ({ text: `[${items.map((i) => i.text).join(',')}]`, forbidden: items.some((i) => i.forbidden) })),
    // Unique names: of a key sent twice the parse keeps the last, so an earlier value is no key of the result.
    fc
      .uniqueArray(
        fc.tuple(
          fc.constantFrom(...NAMES).chain((name) => spelled(name).map((s) => ({ name, s }))),
          tie('tree'),
        ),
        { maxLength: 3, selector: ([k]) => k.name },
      )
      .map((members) => ({
        text: `{${members.map(([k, v]) => `"${k.s}":${v.text}`).join(',')}}`,
        forbidden: members.some(([k, v]) => FORBIDDEN.has(k.name) || v.forbidden),
      })),
  ),
}));

describe('parseJson of any body, however its keys are spelled', () => {
  it('refuses it as forbidden_key exactly when some key of some object is __proto__ or constructor', () => {
    fc.assert(
      fc.property(tree, (node) => {
        let code = 'ok';
        try {
          parseJson(Buffer.from(node.text));
        } catch (err) {
          code = (err as SvcWebhookError).code;
        }
        expect(code).toBe(node.forbidden ? 'forbidden_key' : 'ok');
      }),
      { numRuns: 500 },
    );
  });
});
