import { describe, expect, it } from 'vitest';
import { executeTurnRequestProblem, formatZodError, toolCallSchemas } from '../../src/contracts/tool-call.js';

/** What the schema alone says of a request: the validator's answer before it recognised the usual shape itself. */
function schemaProblem(request: unknown): string | undefined {
  const parsed = toolCallSchemas().executeTurn.safeParse(request);
  return parsed.success ? undefined : formatZodError(parsed.error);
}

const call = (id: unknown, name: unknown = 'Glob', input: unknown = { pattern: '*' }) => ({ id, name, input });

const requests: Array<[string, unknown]> = [
  ['one call', { turnId: 't', calls: [call('a')] }],
  ['no calls', { turnId: 't', calls: [] }],
  ['an input given as a JSON string', { turnId: 't', calls: [call('a', 'Glob', '{"pattern":"*"}')] }],
  ['a call without input', { turnId: 't', calls: [{ id: 'a', name: 'Glob' }] }],
  ['a call whose input is undefined', { turnId: 't', calls: [{ id: 'a', name: 'Glob', input: undefined }] }],
  ['a call whose input is null', { turnId: 't', calls: [call('a', 'Glob', null)] }],
  ['extra keys', { turnId: 't', calls: [{ ...call('a'), extra: 1 }], more: true }],
  ['an empty turnId', { turnId: '', calls: [call('a')] }],
  ['a numeric turnId', { turnId: 1, calls: [call('a')] }],
  ['no turnId', { calls: [call('a')] }],
  ['calls not a list', { turnId: 't', calls: { 0: call('a') } }],
  ['no calls key', { turnId: 't' }],
  ['an empty call id', { turnId: 't', calls: [call('')] }],
  ['a numeric call id', { turnId: 't', calls: [call(7)] }],
  ['a call without a name', { turnId: 't', calls: [{ id: 'a', input: {} }] }],
  ['a numeric name', { turnId: 't', calls: [call('a', 3)] }],
  ['a duplicate id', { turnId: 't', calls: [call('a'), call('b'), call('a')] }],
  ['a call that is a list', { turnId: 't', calls: [['a', 'Glob']] }],
  ['a null call', { turnId: 't', calls: [null] }],
  ['a request that is a list', [{ turnId: 't', calls: [] }]],
  ['null', null],
  ['a string', 'turn'],
];

describe('executeTurn request check (the update validator, on the workflow thread)', () => {
  it.each(requests)('answers as the schema does for %s', (_label, request) => {
    expect(executeTurnRequestProblem(request)).toBe(schemaProblem(request));
  });

  it('accepts the usual requests and names the problem of the others', () => {
    expect(executeTurnRequestProblem({ turnId: 't', calls: [call('a'), call('b')] })).toBeUndefined();
    expect(executeTurnRequestProblem({ turnId: 't', calls: [call('a'), call('a')] })).toContain(
      'duplicate call id "a"',
    );
    expect(executeTurnRequestProblem({ turnId: '', calls: [] })).toContain('turnId must be a non-empty string');
  });
});
