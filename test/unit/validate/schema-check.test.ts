import { schemaProblems, schemaRefusal, schemaViolation, type SchemaProblem } from '../../../src/validate/delivery-checks';
import { fixture } from '../../support/sign';

describe('the schema policy', () => {
  const event = fixture('board', 'task.created') as Record<string, unknown>;
  const broken = { ...event, id: 7 };

  it('passes a delivery that matches, under every policy', () => {
    for (const policy of ['reject', 'warn', 'skip'] as const) expect(schemaRefusal('board', event, policy, undefined)).toBeUndefined();
  });

  it('refuses a mismatch under reject as schema_violation (400), the problems as details', () => {
    const refusal = schemaRefusal('board', broken, 'reject', undefined)!;
    expect([refusal.code, refusal.status]).toEqual(['schema_violation', 400]);
    expect(refusal.details).toEqual(expect.arrayContaining([{ path: '/id', message: expect.any(String) }]));
  });

  it('reports a mismatch under warn and lets it through', () => {
    const warned: [string, SchemaProblem[]][] = [];
    expect(schemaRefusal('board', broken, 'warn', (error, found) => void warned.push([error.code, found]))).toBeUndefined();
    expect(warned).toEqual([['schema_violation', expect.arrayContaining([{ path: '/id', message: expect.any(String) }])]]);
    expect(schemaRefusal('board', broken, 'warn', undefined)).toBeUndefined();
  });

  it('does not validate under skip', () => {
    expect(schemaRefusal('board', 'not even an object', 'skip', undefined)).toBeUndefined();
    const warn = jest.fn();
    expect(schemaRefusal('board', broken, 'skip', warn)).toBeUndefined();
    expect(warn).not.toHaveBeenCalled();
  });

  it('names the root as "/", and keeps at most five problems', () => {
    const rootRefusal = schemaRefusal('bot', 'not an object', 'reject', undefined)!;
    expect((rootRefusal.details as SchemaProblem[])[0]!.path).toBe('/');
    const errors = Array.from({ length: 7 }, (_, i) => ({ instancePath: `/p${i}`, keyword: 'type', message: 'must be string', schemaPath: '', params: {} }));
    const found = schemaProblems(
      Object.assign(() => false, { errors }),
      {},
    );
    expect(found.map((p) => p.path)).toEqual(['/p0', '/p1', '/p2', '/p3', '/p4']);
  });

  it('finds no problems when a failed check leaves no errors', () => {
    expect(
      schemaProblems(
        Object.assign(() => false, { errors: null }),
        {},
      ),
    ).toEqual([]);
    expect(schemaProblems(() => false, {})).toEqual([]);
  });

  it("describes a problem by ajv's message, or by the failed keyword when there is none", () => {
    const validate = Object.assign(() => false, {
      errors: [
        { instancePath: '/a', keyword: 'type', message: 'must be string', schemaPath: '', params: {} },
        { instancePath: '/b', keyword: 'required', schemaPath: '', params: {} },
      ],
    });
    const refusal = schemaViolation([]);
    expect(refusal.details).toEqual([]);
    expect(schemaProblems(validate, {})).toEqual([
      { path: '/a', message: 'must be string' },
      { path: '/b', message: 'required' },
    ]);
  });
});
