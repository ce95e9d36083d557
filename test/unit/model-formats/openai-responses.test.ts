import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  callsFromOpenAIResponses,
  toOpenAIResponsesOutputs,
  toOpenAIResponsesOutputsWithImages,
  toOpenAIResponsesStrictTools,
  toOpenAIResponsesTools,
} from '../../../src/client/model-formats/openai-responses.js';
import { openAIResponsesToolStream } from '../../../src/client/model-formats/openai-responses-stream.js';
import type { OpenAIResponsesStreamEvent } from '../../../src/client/model-formats/openai-responses-stream.js';
import { toStrictJsonSchema } from '../../../src/client/model-formats/strict-schema.js';
import type { JsonSchema } from '../../../src/client/model-formats/shared.js';
import { lookupAndParse } from '../../../src/activities/plan-call.js';
import { builtinTools } from '../../../src/tools/builtin.js';
import { defineTool } from '../../../src/tools/define-tool.js';
import { ToolRegistry } from '../../../src/tools/registry.js';
import { artifacts, failed, getWeatherTool, recordingTurn, result, withImage } from './fixtures.js';

/** Every strict-mode rule of OpenAI's Structured Outputs, checked on a whole schema; returns the broken ones. */
function strictViolations(schema: unknown, path = '$'): string[] {
  if (schema === null || typeof schema !== 'object' || Array.isArray(schema)) return [];
  const node = schema as JsonSchema;
  const problems: string[] = [];
  for (const keyword of [
    'minLength',
    'maxLength',
    'default',
    '$schema',
    'oneOf',
    'allOf',
    'uniqueItems',
    'propertyNames',
    'patternProperties',
  ]) {
    if (keyword in node) problems.push(`${path}: unsupported ${keyword}`);
  }
  if (
    node.type === undefined &&
    node.anyOf === undefined &&
    node.$ref === undefined &&
    node.enum === undefined &&
    node.const === undefined
  )
    problems.push(`${path}: untyped`);
  const types = Array.isArray(node.type) ? node.type : [node.type];
  if (types.includes('object')) {
    if (node.additionalProperties !== false) problems.push(`${path}: additionalProperties is not false`);
    const keys = Object.keys((node.properties as object | undefined) ?? {});
    if (
      JSON.stringify([...((node.required as string[] | undefined) ?? [])].sort()) !== JSON.stringify([...keys].sort())
    )
      problems.push(`${path}: not every property is required`);
  }
  for (const [name, child] of Object.entries((node.properties as Record<string, unknown> | undefined) ?? {}))
    problems.push(...strictViolations(child, `${path}.${name}`));
  if (node.items !== undefined) problems.push(...strictViolations(node.items, `${path}[]`));
  for (const [index, option] of ((node.anyOf as unknown[] | undefined) ?? []).entries())
    problems.push(...strictViolations(option, `${path}.anyOf[${index}]`));
  return problems;
}

describe('OpenAI Responses adapter', () => {
  it('exports flat function tools with strict: false by default (the API would make an omitted strict true)', () => {
    const [tool] = toOpenAIResponsesTools([getWeatherTool]);
    expect(tool).toEqual({
      type: 'function',
      name: 'get_weather',
      description: 'Get the current weather in a given location',
      parameters: {
        type: 'object',
        properties: {
          location: { type: 'string', minLength: 1, description: 'The city and state, e.g. San Francisco, CA' },
          unit: { type: 'string', enum: ['celsius', 'fahrenheit'] },
        },
        required: ['location'],
        additionalProperties: false,
      },
      strict: false,
    });
    expect(tool).not.toHaveProperty('function');
  });

  it('exports every built-in tool in strict mode meeting every strict rule, on a copy', () => {
    const tools = builtinTools();
    const before = JSON.stringify(toOpenAIResponsesTools(tools));
    const strict = toOpenAIResponsesStrictTools(tools);
    for (const tool of strict) {
      expect(tool.strict).toBe(true);
      expect(strictViolations(tool.parameters), tool.name).toEqual([]);
    }
    expect(JSON.stringify(toOpenAIResponsesTools(tools))).toBe(before);
    const byName = Object.fromEntries(strict.map((tool) => [tool.name, tool.parameters]));
    // Read's optional offset becomes a required nullable field; TodoWrite's items get additionalProperties: false;
    // submit_result's untyped result gets a type.
    expect(byName.Read).toMatchObject({
      required: ['file_path', 'offset', 'limit'],
      properties: { offset: { type: ['integer', 'null'] } },
    });
    expect((byName.TodoWrite?.properties as Record<string, JsonSchema>).todos?.items).toMatchObject({
      additionalProperties: false,
      required: ['content', 'status', 'activeForm', 'id'],
    });
    expect((byName.submit_result?.properties as Record<string, JsonSchema>).result?.type).toEqual([
      'string',
      'number',
      'boolean',
      'null',
    ]);
  });

  it('refuses in strict mode what strict cannot express, naming the tool and the rule', () => {
    expect(() =>
      toStrictJsonSchema({
        toolName: 'notes',
        schema: { type: 'object', properties: { tags: { type: 'object', additionalProperties: { type: 'string' } } } },
      }),
    ).toThrow(
      'Tool "notes" cannot be sent to openai-responses: strict mode cannot express a free-form object (at $.properties.tags)',
    );
  });

  it('reads function_call items keyed by call_id (not the fc_ item id), skipping other items', () => {
    // OpenAI function-calling guide: the response output holds function_call items with id, call_id, name, arguments.
    const output = [
      { type: 'reasoning', id: 'rs_1' },
      {
        type: 'function_call',
        id: 'fc_12345xyz',
        call_id: 'call_12345xyz',
        name: 'get_weather',
        arguments: '{"location":"Paris, France"}',
      },
      {
        type: 'function_call',
        id: 'fc_67890abc',
        call_id: 'call_67890abc',
        name: 'get_weather',
        arguments: '{"location":"Bogotá, Colombia"}',
      },
    ];
    expect(callsFromOpenAIResponses(output)).toEqual([
      { id: 'call_12345xyz', name: 'get_weather', input: '{"location":"Paris, France"}' },
      { id: 'call_67890abc', name: 'get_weather', input: '{"location":"Bogotá, Colombia"}' },
    ]);
  });

  it('answers with function_call_output items keyed by call_id, errors marked', async () => {
    expect(toOpenAIResponsesOutputs([result('call_12345xyz'), failed('call_67890abc', 'Permission denied')])).toEqual([
      { type: 'function_call_output', call_id: 'call_12345xyz', output: 'content of call_12345xyz' },
      { type: 'function_call_output', call_id: 'call_67890abc', output: 'Error: Permission denied' },
    ]);
    expect(await toOpenAIResponsesOutputsWithImages([withImage('call_1')], { artifacts })).toEqual([
      {
        type: 'function_call_output',
        call_id: 'call_1',
        output: [
          { type: 'input_text', text: withImage('call_1').modelContent },
          { type: 'input_image', image_url: 'data:image/jpeg;base64,/9j/4AAQSkZJRg==' },
        ],
      },
    ]);
  });
});

describe('strict-mode nulls', () => {
  const registry = new ToolRegistry(builtinTools());
  const parse = (name: string, input: unknown) => lookupAndParse({ registry, call: { id: 'call_1', name, input } });

  it('treats null for an optional field as absent, as a strict-mode model sends it', () => {
    expect(parse('Read', '{"file_path":"a.txt","offset":null,"limit":null}')).toMatchObject({
      kind: 'parsed',
      input: { file_path: 'a.txt' },
    });
    const todo = parse('TodoWrite', {
      todos: [{ content: 'Run the tests', status: 'pending', activeForm: null, id: null }],
    });
    expect(todo).toMatchObject({ kind: 'parsed', input: { todos: [{ content: 'Run the tests', status: 'pending' }] } });
    expect((todo as { input: { todos: object[] } }).input.todos[0]).not.toHaveProperty('activeForm');
  });

  it('still refuses null for a required field, and keeps null where the schema allows it', () => {
    expect(parse('Read', { file_path: null })).toMatchObject({
      kind: 'rejected',
      modelContent: expect.stringContaining('file_path'),
    });
    expect(parse('submit_result', { result: null })).toMatchObject({ kind: 'parsed', input: { result: null } });
    const nullable = defineTool({
      name: 'Note',
      description: 'x',
      inputSchema: z.strictObject({ text: z.string().nullable().optional() }),
      execute: async () => '',
    });
    expect(
      lookupAndParse({
        registry: new ToolRegistry([nullable]),
        call: { id: 'c', name: 'Note', input: { text: null } },
      }),
    ).toMatchObject({ kind: 'parsed', input: { text: null } });
  });

  it('cleans an MCP tool by its own JSON Schema', () => {
    const mcp = Object.assign(
      defineTool({
        name: 'mcp__notes__find',
        description: 'x',
        inputSchema: z.record(z.string(), z.unknown()),
        execute: async () => '',
      }),
      {
        mcpInputSchema: {
          type: 'object',
          properties: { query: { type: 'string' }, limit: { type: 'integer' }, cursor: { type: ['string', 'null'] } },
          required: ['query'],
        },
      },
    );
    const parsed = lookupAndParse({
      registry: new ToolRegistry([mcp]),
      call: { id: 'c', name: 'mcp__notes__find', input: { query: null, limit: null, cursor: null } },
    });
    expect(parsed).toMatchObject({ kind: 'parsed', input: { query: null, cursor: null } });
    expect((parsed as { input: object }).input).not.toHaveProperty('limit');
  });
});

/** The Responses streaming example of the function-calling guide, for one call. */
function documentedCall(
  outputIndex: number,
  itemId: string,
  callId: string,
  deltas: string[],
): OpenAIResponsesStreamEvent[] {
  const base = { response_id: 'resp_1234xyz', output_index: outputIndex };
  const full = deltas.join('');
  return [
    {
      type: 'response.output_item.added',
      ...base,
      item: { type: 'function_call', id: itemId, call_id: callId, name: 'get_weather', arguments: '' },
    },
    ...deltas.map((delta) => ({ type: 'response.function_call_arguments.delta', ...base, item_id: itemId, delta })),
    { type: 'response.function_call_arguments.done', ...base, item_id: itemId, arguments: full },
    {
      type: 'response.output_item.done',
      ...base,
      item: { type: 'function_call', id: itemId, call_id: callId, name: 'get_weather', arguments: full },
    },
  ];
}

describe('Responses stream assembler', () => {
  it('adds each function_call at function_call_arguments.done, keyed by call_id, and ends at response.completed', async () => {
    const turn = recordingTurn();
    const tools = openAIResponsesToolStream({ turn });
    const firstCall = documentedCall(0, 'fc_1234xyz', 'call_1234xyz', [
      '{"',
      'location',
      '":"',
      'Paris',
      ',',
      ' France',
      '"}',
    ]);
    for (const event of firstCall) await tools.push(event);
    expect(turn.log).toEqual(['add call_1234xyz']);
    for (const event of documentedCall(1, 'fc_5678', 'call_5678', ['{"location":"Rome"}'])) await tools.push(event);
    await tools.push({ type: 'response.completed', response: { status: 'completed' } });
    expect(turn.log).toEqual(['add call_1234xyz', 'add call_5678', 'end']);
    expect(turn.added[0]).toEqual({ id: 'call_1234xyz', name: 'get_weather', input: { location: 'Paris, France' } });
    expect(toOpenAIResponsesOutputs(await tools.results()).map((item) => item.call_id)).toEqual([
      'call_1234xyz',
      'call_5678',
    ]);
  });

  it('gives a call unfinished at response.incomplete (max_output_tokens) an error result', async () => {
    const turn = recordingTurn();
    const tools = openAIResponsesToolStream({ turn });
    const cut = documentedCall(0, 'fc_cut', 'call_cut', ['{"location":"Par']).slice(0, 2);
    for (const event of cut) await tools.push(event);
    await tools.push({
      type: 'response.incomplete',
      response: { status: 'incomplete', incomplete_details: { reason: 'max_output_tokens' } },
    });
    expect(turn.log).toEqual([]); // nothing ran, so no turn was opened on the session
    const [only] = await tools.results();
    expect(only).toMatchObject({
      callId: 'call_cut',
      isError: true,
      modelContent: expect.stringContaining('(the model stopped: max_output_tokens)'),
    });
  });
});
