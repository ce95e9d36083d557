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
    sort: {
      type: 'array',
      items: { type: 'object', properties: { by: { type: 'string' }, descending: { type: 'boolean' } } },
    },
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

  it('answers an input with no null as it is, and still finds a null deep in an array', () => {
    const clean = { query: 'q', cursor: 'c', sort: [{ by: 'date', descending: false }], limit: 0 };
    expect(dropOptionalNulls({ schema: anyInput, jsonSchema: mcpSchema, input: clean })).toBe(clean);
    const deep = { query: 'q', cursor: 'c', sort: [{ by: 'date' }, { by: 'name', descending: null }] };
    expect(dropOptionalNulls({ schema: anyInput, jsonSchema: mcpSchema, input: deep })).toEqual({
      query: 'q',
      cursor: 'c',
      sort: [{ by: 'date' }, { by: 'name' }],
    });
    const zodSchema = z.object({ items: z.array(z.object({ name: z.string(), tag: z.string().optional() })) });
    expect(
      dropOptionalNulls({ schema: zodSchema, input: { items: [{ name: 'a' }, { name: 'b', tag: null }] } }),
    ).toEqual({ items: [{ name: 'a' }, { name: 'b' }] });
  });

  it('leaves the input unchanged in place', () => {
    const input = { query: 'q', cursor: 'c', filter: { field: 'f', value: null } };
    const copy = structuredClone(input);
    dropOptionalNulls({ schema: anyInput, jsonSchema: mcpSchema, input });
    expect(input).toEqual(copy);
  });
});

// optional-nulls.ts walks a zod schema through zod's internal definition (`schema._zod.def`: `type`, and `innerType`,
// `in`, `element` or `shape`), which is not zod's public API. These tests pin that shape: if a zod upgrade changes
// it, they fail here rather than letting strict-mode nulls through to validation.
describe('the zod definition shape dropOptionalNulls reads', () => {
  const definitionOf = (schema: z.ZodType) =>
    (schema as unknown as { _zod: { def: Record<string, unknown> } })._zod.def;
  const inner = z.object({ keep: z.string(), drop: z.string().optional() });

  it('names each wrapper and the schema it wraps as optional-nulls.ts expects', () => {
    const wrappers: Array<[string, z.ZodType]> = [
      ['optional', inner.optional()],
      ['nullable', inner.nullable()],
      ['default', inner.default({ keep: 'k' })],
      ['prefault', inner.prefault({ keep: 'k' })],
      ['readonly', inner.readonly()],
      ['catch', inner.catch({ keep: 'k' })],
      ['nonoptional', inner.optional().nonoptional()],
    ];
    for (const [type, schema] of wrappers) {
      const definition = definitionOf(schema);
      expect(definition.type, type).toBe(type);
      // nonoptional wraps the optional, which wraps the object.
      const wrapped =
        type === 'nonoptional' ? definitionOf(definition.innerType as z.ZodType).innerType : definition.innerType;
      expect(wrapped, type).toBe(inner);
    }
    const piped = inner.transform((value) => value);
    expect(definitionOf(piped).type).toBe('pipe');
    expect(definitionOf(piped).in).toBe(inner);
    const array = z.array(inner);
    expect(definitionOf(array).type).toBe('array');
    expect(definitionOf(array).element).toBe(inner);
    expect(definitionOf(inner).type).toBe('object');
    expect(definitionOf(inner).shape).toBe(inner.shape);
  });

  it('drops a null for an optional field through every wrapper, a pipe and an array', () => {
    const schemas: z.ZodType[] = [
      inner.optional(),
      inner.nullable(),
      inner.default({ keep: 'k' }),
      inner.prefault({ keep: 'k' }),
      inner.readonly(),
      inner.catch({ keep: 'k' }),
      inner.optional().nonoptional(),
      inner.transform((value) => value),
    ];
    for (const schema of schemas) {
      expect(
        dropOptionalNulls({ schema, input: { keep: 'k', drop: null } }),
        definitionOf(schema).type as string,
      ).toEqual({ keep: 'k' });
    }
    expect(dropOptionalNulls({ schema: z.array(inner), input: [{ keep: 'k', drop: null }] })).toEqual([{ keep: 'k' }]);
    expect(
      dropOptionalNulls({ schema: z.object({ nested: inner }), input: { nested: { keep: 'k', drop: null } } }),
    ).toEqual({ nested: { keep: 'k' } });
  });
});
