import { z } from 'zod';
import type { ToolCall } from '../../../src/contracts/tool-call.js';
import type { ToolResult } from '../../../src/contracts/tool-result.js';
import type { StreamTurnTarget } from '../../../src/client/model-formats/stream-assembler.js';
import { defineTool } from '../../../src/tools/define-tool.js';
import type { Tool } from '../../../src/tools/define-tool.js';

/** The tool of the providers' documented function-calling examples. */
export const getWeatherTool: Tool = defineTool({
  name: 'get_weather',
  description: 'Get the current weather in a given location',
  inputSchema: z.strictObject({
    location: z.string().min(1).describe('The city and state, e.g. San Francisco, CA'),
    unit: z.enum(['celsius', 'fahrenheit']).optional(),
  }),
  concurrentSafe: true,
  readOnly: true,
  execute: async (input) => `15 degrees in ${input.location}`,
});

/** A tool with no arguments (Anthropic streams its input as `partial_json: ""`). */
export const getTimeTool: Tool = defineTool({
  name: 'get_time',
  description: 'The current time',
  inputSchema: z.strictObject({}),
  readOnly: true,
  execute: async () => '12:00',
});

/** A name Anthropic and OpenAI refuse (`.` and `:`), as an MCP bridge might make it. */
export const dottedTool: Tool = defineTool({
  name: 'mcp.notes:search',
  description: 'Search notes',
  inputSchema: z.strictObject({ query: z.string() }),
  execute: async () => 'found',
});

export const result = (callId: string, overrides: Partial<ToolResult> = {}): ToolResult => ({
  callId,
  toolName: 'get_weather',
  status: 'success',
  modelContent: `content of ${callId}`,
  isError: false,
  timings: { totalMs: 1, permissionWaitMs: 0, queuedMs: 0 },
  ...overrides,
});

export const failed = (callId: string, modelContent: string): ToolResult =>
  result(callId, { status: 'error', isError: true, modelContent, errorCode: 'timeout' });

/** A streaming turn that records what an assembler hands it, in order, and answers each added call. */
export function recordingTurn(): StreamTurnTarget & { log: string[]; added: ToolCall[]; ended: boolean } {
  const log: string[] = [];
  const added: ToolCall[] = [];
  const turn = {
    log,
    added,
    ended: false,
    add: async (...calls: ToolCall[]) => {
      for (const call of calls) {
        added.push(call);
        log.push(`add ${call.id}`);
      }
      return {};
    },
    end: async () => {
      turn.ended = true;
      log.push('end');
      return {};
    },
    results: async function* () {
      for (const call of added)
        yield result(call.id, { toolName: call.name, modelContent: `ran ${call.name} ${JSON.stringify(call.input)}` });
    },
  };
  return turn;
}

export const jpegBytes = Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0x00, 0x10, 0x4a, 0x46, 0x49, 0x46]);
export const imageUri = 'switchyard-artifact://s/call_1-tool-result-1';
export const artifacts = {
  readBytes: async (artifact: string): Promise<Uint8Array> => {
    if (artifact !== imageUri) throw new Error(`Artifact not found: ${artifact}`);
    return jpegBytes;
  },
};
export const withImage = (callId: string): ToolResult =>
  result(callId, {
    modelContent: `15 degrees\n[image: image/jpeg, 10 bytes, ${imageUri}]`,
    content: [
      { type: 'text', text: '15 degrees' },
      { type: 'image', mediaType: 'image/jpeg', artifact: imageUri, bytes: 10 },
    ],
  });
