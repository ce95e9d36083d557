// A scripted stand-in for the Anthropic Messages API: a local HTTP server that answers each request with the next
// step of a script. For tests, and for trying the example offline. The step is chosen by how many assistant messages
// the request already carries, so a retried request (after a killed worker) gets the same answer again.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { AssistantBlock } from './model.js';

interface RequestMessage {
  role: 'user' | 'assistant';
  content: unknown;
}

/** One reply of the script: its content blocks, or a function of the conversation so far. */
export type ScriptStep = AssistantBlock[] | ((messages: readonly RequestMessage[]) => AssistantBlock[]);

export interface ScriptedModel {
  /** Base URL to use as `ANTHROPIC_BASE_URL`. */
  url: string;
  /** The request bodies received, oldest first. */
  requests: Array<{ messages: RequestMessage[]; tools: Array<{ name: string }> }>;
  close(): Promise<void>;
}

/** The text of the last tool result in the conversation (what the last tool printed). */
export function lastToolResult(messages: readonly RequestMessage[]): string {
  const content = messages.at(-1)?.content;
  if (!Array.isArray(content)) return '';
  const last = (content as Array<{ type?: string; content?: unknown }>)
    .filter((block) => block.type === 'tool_result')
    .at(-1);
  return typeof last?.content === 'string' ? last.content : '';
}

/**
 * The script for the demo workspace (`./demo` in the agent's cwd): read the test and the module, fix the module with
 * Edit (asks for approval in the default mode), run the tests with Bash (asks too), then report what the run said.
 */
export const demoScript: ScriptStep[] = [
  [
    { type: 'text', text: "I'll read the failing test and the module it tests." },
    { type: 'tool_use', id: 'toolu_read_test', name: 'Read', input: { file_path: 'demo/sum.test.js' } },
    { type: 'tool_use', id: 'toolu_read_module', name: 'Read', input: { file_path: 'demo/sum.js' } },
  ],
  [
    { type: 'text', text: '`sum` subtracts instead of adding. Fixing it.' },
    {
      type: 'tool_use',
      id: 'toolu_edit',
      name: 'Edit',
      input: { file_path: 'demo/sum.js', old_string: 'return a - b;', new_string: 'return a + b;' },
    },
  ],
  [
    {
      type: 'tool_use',
      id: 'toolu_test',
      name: 'Bash',
      input: { command: 'cd demo && node --test', description: 'Run the demo tests' },
    },
  ],
  (messages) => {
    const output = lastToolResult(messages);
    const passed = /# fail 0\b/.test(output);
    return [
      {
        type: 'text',
        text: passed
          ? 'Fixed: `sum` in demo/sum.js subtracted instead of adding; `node --test` passes now.'
          : `The tests still fail:\n${output.slice(0, 500)}`,
      },
    ];
  },
];

/** Starts the scripted model on 127.0.0.1 (a free port unless given). Past the script's end it answers with text. */
export async function startScriptedModel(
  options: { script?: readonly ScriptStep[]; port?: number } = {},
): Promise<ScriptedModel> {
  const script = options.script ?? demoScript;
  const requests: ScriptedModel['requests'] = [];
  const server = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk: Buffer) => {
      body += chunk.toString();
    });
    request.on('end', () => {
      const reply = (status: number, payload: unknown): void => {
        response.writeHead(status, { 'content-type': 'application/json' });
        response.end(JSON.stringify(payload));
      };
      if (request.method !== 'POST' || request.url !== '/v1/messages') {
        reply(404, {
          type: 'error',
          error: { type: 'not_found_error', message: `${request.method} ${request.url}: only POST /v1/messages` },
        });
        return;
      }
      let parsed: ScriptedModel['requests'][number];
      try {
        parsed = JSON.parse(body) as ScriptedModel['requests'][number];
      } catch {
        reply(400, { type: 'error', error: { type: 'invalid_request_error', message: 'body is not JSON' } });
        return;
      }
      requests.push(parsed);
      const index = parsed.messages.filter((message) => message.role === 'assistant').length;
      const step = script[index];
      const content =
        step === undefined
          ? [{ type: 'text', text: 'The script has ended.' }]
          : typeof step === 'function'
            ? step(parsed.messages)
            : step;
      const usesTools = content.some((block) => block.type === 'tool_use');
      reply(200, {
        id: `msg_scripted_${index}`,
        type: 'message',
        role: 'assistant',
        model: 'scripted',
        content,
        stop_reason: usesTools ? 'tool_use' : 'end_turn',
        stop_sequence: null,
        usage: { input_tokens: 0, output_tokens: 0 },
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(options.port ?? 0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
