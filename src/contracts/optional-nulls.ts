import type { z } from 'zod';

const isRecord = (value: unknown): value is Record<string, unknown> =>
  value !== null && typeof value === 'object' && !Array.isArray(value);

interface ZodDefinition {
  type: string;
  innerType?: z.ZodType;
  in?: z.ZodType;
  element?: z.ZodType;
  shape?: Record<string, z.ZodType>;
}

const definitionOf = (schema: z.ZodType): ZodDefinition =>
  (schema as unknown as { _zod: { def: ZodDefinition } })._zod.def;

/** A field may be left out but may not be null: a `null` for it is a strict-mode model's way of leaving it out. */
function optionalNotNullable(field: z.ZodType): boolean {
  return field.safeParse(undefined).success && !field.safeParse(null).success;
}

function withoutNullsByZod(schema: z.ZodType, value: unknown): unknown {
  const definition = definitionOf(schema);
  switch (definition.type) {
    case 'optional':
    case 'nullable':
    case 'default':
    case 'prefault':
    case 'readonly':
    case 'catch':
    case 'nonoptional':
      return definition.innerType === undefined ? value : withoutNullsByZod(definition.innerType, value);
    case 'pipe':
      return definition.in === undefined ? value : withoutNullsByZod(definition.in, value);
    case 'array':
      return Array.isArray(value) && definition.element !== undefined
        ? value.map((item) => withoutNullsByZod(definition.element as z.ZodType, item))
        : value;
    case 'object': {
      if (!isRecord(value) || definition.shape === undefined) return value;
      const shape = definition.shape;
      return Object.fromEntries(
        Object.entries(value).flatMap(([key, item]) => {
          const field = shape[key];
          if (field === undefined) return [[key, item]];
          if (item === null && optionalNotNullable(field)) return [];
          return [[key, withoutNullsByZod(field, item)]];
        }),
      );
    }
    default:
      return value;
  }
}

/** Whether `value` is null or holds a null in an array or object, at any depth. */
function containsNull(value: unknown): boolean {
  if (value === null) return true;
  if (typeof value !== 'object') return false;
  if (Array.isArray(value)) return value.some(containsNull);
  for (const key in value) if (containsNull((value as Record<string, unknown>)[key])) return true;
  return false;
}

function allowsNull(schema: unknown): boolean {
  if (!isRecord(schema)) return true;
  if (schema.type === 'null' || (Array.isArray(schema.type) && schema.type.includes('null'))) return true;
  if (schema.type === undefined && schema.anyOf === undefined && schema.oneOf === undefined) return true;
  return [schema.anyOf, schema.oneOf].some((options) => Array.isArray(options) && options.some(allowsNull));
}

function withoutNullsByJsonSchema(schema: unknown, value: unknown): unknown {
  if (!isRecord(schema)) return value;
  if (Array.isArray(value)) return value.map((item) => withoutNullsByJsonSchema(schema.items, item));
  if (!isRecord(value) || !isRecord(schema.properties)) return value;
  const properties = schema.properties;
  const required = new Set(Array.isArray(schema.required) ? schema.required : []);
  return Object.fromEntries(
    Object.entries(value).flatMap(([key, item]) => {
      if (!(key in properties)) return [[key, item]];
      if (item === null && !required.has(key) && !allowsNull(properties[key])) return [];
      return [[key, withoutNullsByJsonSchema(properties[key], item)]];
    }),
  );
}

/**
 * A call's input with `null` removed wherever the schema has an optional field that does not accept `null`:
 * OpenAI's strict mode makes every field required and sends `null` for the ones the model leaves out, which
 * means "absent". Nested objects and arrays are cleaned too. A tool with its own JSON Schema (MCP) is cleaned by
 * that schema. The input is not changed in place.
 */
export function dropOptionalNulls(options: { schema: z.ZodType; jsonSchema?: unknown; input: unknown }): unknown {
  // Most inputs hold no null at all: nothing to drop, and no walk of the schema.
  if (!containsNull(options.input)) return options.input;
  if (isRecord(options.jsonSchema)) return withoutNullsByJsonSchema(options.jsonSchema, options.input);
  return withoutNullsByZod(options.schema, options.input);
}
