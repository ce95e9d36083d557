import type { JsonSchema, ModelProvider } from './shared.js';
import { ToolExportError, isRecord } from './shared.js';

/**
 * Keywords OpenAI's strict mode (Structured Outputs) does not support; they are dropped from the copy the model
 * sees. Switchyard still validates every call against the full schema, so nothing is lost but the hint.
 */
const unsupportedKeywords = new Set([
  '$schema',
  'default',
  'minLength',
  'maxLength',
  'patternProperties',
  'unevaluatedProperties',
  'propertyNames',
  'minProperties',
  'maxProperties',
  'unevaluatedItems',
  'contains',
  'minContains',
  'maxContains',
  'uniqueItems',
  'allOf',
  'not',
  'if',
  'then',
  'else',
  'dependentRequired',
  'dependentSchemas',
]);

/** What an untyped value (`z.unknown()`, `{}`) becomes: strict mode needs a type, and these need no more keywords. */
const untypedValue = ['string', 'number', 'boolean', 'null'];

const maxNesting = 10;

interface StrictContext {
  toolName: string;
  provider: ModelProvider;
}

function nullable(schema: JsonSchema): JsonSchema {
  if (typeof schema.type === 'string') {
    const withNull: JsonSchema = { ...schema, type: schema.type === 'null' ? 'null' : [schema.type, 'null'] };
    if (Array.isArray(schema.enum) && !schema.enum.includes(null))
      withNull.enum = [...(schema.enum as unknown[]), null];
    return withNull;
  }
  if (Array.isArray(schema.type)) {
    const withNull: JsonSchema = {
      ...schema,
      type: schema.type.includes('null') ? schema.type : [...(schema.type as unknown[]), 'null'],
    };
    if (Array.isArray(schema.enum) && !schema.enum.includes(null))
      withNull.enum = [...(schema.enum as unknown[]), null];
    return withNull;
  }
  if (Array.isArray(schema.anyOf)) {
    const hasNull = (schema.anyOf as unknown[]).some((option) => isRecord(option) && option.type === 'null');
    return hasNull ? schema : { ...schema, anyOf: [...(schema.anyOf as unknown[]), { type: 'null' }] };
  }
  const { description, ...rest } = schema;
  return { ...(description === undefined ? {} : { description }), anyOf: [rest, { type: 'null' }] };
}

function strictNode(node: unknown, path: string, depth: number, context: StrictContext): JsonSchema {
  if (depth > maxNesting)
    throw new ToolExportError(
      context.toolName,
      context.provider,
      `strict mode allows at most ${maxNesting} levels of nesting (at ${path})`,
    );
  if (node === true || !isRecord(node)) return { type: untypedValue };
  const schema: JsonSchema = {};
  for (const [key, value] of Object.entries(node)) {
    if (unsupportedKeywords.has(key)) continue;
    schema[key === 'oneOf' ? 'anyOf' : key] = value;
  }
  if (Array.isArray(schema.anyOf))
    schema.anyOf = (schema.anyOf as unknown[]).map((option, index) =>
      strictNode(option, `${path}.anyOf[${index}]`, depth + 1, context),
    );
  for (const defsKey of ['$defs', 'definitions']) {
    const defs = schema[defsKey];
    if (isRecord(defs))
      schema[defsKey] = Object.fromEntries(
        Object.entries(defs).map(([name, child]) => [
          name,
          strictNode(child, `${path}.${defsKey}.${name}`, depth + 1, context),
        ]),
      );
  }
  const typed =
    schema.type !== undefined ||
    schema.anyOf !== undefined ||
    schema.$ref !== undefined ||
    schema.enum !== undefined ||
    schema.const !== undefined;
  if (!typed && schema.properties === undefined) return { ...schema, type: untypedValue };
  const types = Array.isArray(schema.type) ? (schema.type as unknown[]) : [schema.type];
  if (types.includes('object') || schema.properties !== undefined) {
    const properties = isRecord(schema.properties) ? schema.properties : {};
    if (
      Object.keys(properties).length === 0 &&
      schema.additionalProperties !== undefined &&
      schema.additionalProperties !== false
    ) {
      throw new ToolExportError(
        context.toolName,
        context.provider,
        `strict mode cannot express a free-form object (at ${path}): every object needs its properties listed`,
      );
    }
    const required = new Set(Array.isArray(schema.required) ? (schema.required as unknown[]) : []);
    schema.type = schema.type ?? 'object';
    schema.properties = Object.fromEntries(
      Object.entries(properties).map(([name, child]) => {
        const strict = strictNode(child, `${path}.properties.${name}`, depth + 1, context);
        return [name, required.has(name) ? strict : nullable(strict)];
      }),
    );
    schema.required = Object.keys(properties);
    schema.additionalProperties = false;
  }
  if (types.includes('array')) schema.items = strictNode(schema.items ?? {}, `${path}.items`, depth + 1, context);
  return schema;
}

/**
 * A copy of a tool's input schema that meets every rule of OpenAI's strict mode (Structured Outputs): every
 * property is required, the optional ones made nullable (a strict model sends `null` for "absent", and Switchyard
 * drops a `null` for an optional field before it validates); `additionalProperties: false` on every object;
 * unsupported keywords such as `minLength` removed; untyped values typed as a scalar (`string | number | boolean |
 * null`); `oneOf` as `anyOf`. The root must be an object. Throws a `ToolExportError` for what strict mode cannot
 * express (a free-form object, more than 10 levels of nesting).
 */
export function toStrictJsonSchema(options: {
  toolName: string;
  schema: JsonSchema;
  provider?: ModelProvider;
}): JsonSchema {
  const context = { toolName: options.toolName, provider: options.provider ?? 'openai-responses' };
  if (options.schema.type !== 'object')
    throw new ToolExportError(context.toolName, context.provider, 'strict mode needs an object schema at the root');
  return strictNode(structuredClone(options.schema), '$', 0, context);
}
