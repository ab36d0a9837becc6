import { codeBlocks, documentationFiles } from './markdown';

/** The variables a receiver reads its secrets from, and the CLI with it: one name per secret. */
const SECRET_VARIABLES = ['SVC_BOARD_WEBHOOK_SECRET', 'SVC_BOT_WEBHOOK_SECRET'];

describe('the environment variables of the webhook secrets in README.md and docs/', () => {
  const blocks = documentationFiles().flatMap(codeBlocks);
  const named = blocks.flatMap((b) =>
    [...b.code.matchAll(/\b([A-Z][A-Z0-9_]*SECRET[A-Z0-9_]*)\b/g)].map((m) => ({ where: `${b.file}:${b.line}`, name: m[1]! })),
  );

  it('are there to check', () => {
    expect(named.length).toBeGreaterThan(5);
  });

  it('are one name per secret in every example: the one the receiver reads, which the CLI reads too', () => {
    expect(named.filter((n) => !SECRET_VARIABLES.includes(n.name)).map((n) => `${n.where}: ${n.name}`)).toEqual([]);
  });
});
