import { z } from 'zod';
import { describe, expect, it } from 'vitest';
import { dropOptionalNulls } from '../../src/contracts/optional-nulls.js';

/** An MCP tool's own JSON Schema, as a server lists it: nested objects, arrays of objects, nullable fields. */
const mcpSchema = {
  type: 'object',
  required: ['query', 'cursor'],
  properties: {
    query: { type: 'string' },
    cursor: { type: 'string' },
    limit: { type: 'integer' },
    note: { type: ['string', 'null'] },
    anything: {},
    filter: {
      type: 'object',
      required: ['field'],
      properties: {
        field: { type: 'string' },
        value: { type: 'string' },
        fallback: { anyOf: [{ type: 'string' }, { type: 'null' }] },
        range: { type: 'object', properties: { from: { type: 'integer' }, to: { type: 'integer' } } },
      },
    },
    sort: { type: 'array', items: { type: 'object', properties: { by: { type: 'string' }, descending: { type: 'boolean' } } } },
  },
};

const anyInput = z.record(z.string(), z.unknown());

describe('dropOptionalNulls with an MCP tool schema', () => {
  it('drops a strict-mode null for an optional field at every depth, in objects and in arrays of objects', () => {
    const input = {
      query: 'q',
      cursor: null,
      limit: null,
      note: null,
      anything: null,
      filter: { field: 'name', value: null, fallback: null, range: { from: 1, to: null } },
      sort: [{ by: 'date', descending: null }, { by: null }],
      extra: null,
    };
    expect(dropOptionalNulls({ schema: anyInput, jsonSchema: mcpSchema, input })).toEqual({
      query: 'q',
      // Required: a null there is the model's value, left for validation to judge.
      cursor: null,
      // Nullable (a type list, anyOf with null) or untyped: null is a value.
      note: null,
      anything: null,
      filter: { field: 'name', fallback: null, range: { from: 1 } },
      sort: [{ by: 'date' }, {}],
      // Not in the schema: left alone.
      extra: null,
    });
  });

  it('leaves the input unchanged in place', () => {
    const input = { query: 'q', cursor: 'c', filter: { field: 'f', value: null } };
    const copy = structuredClone(input);
    dropOptionalNulls({ schema: anyInput, jsonSchema: mcpSchema, input });
    expect(input).toEqual(copy);
  });
});
