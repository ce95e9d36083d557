import {
  anthropicToolStream,
  parseArguments,
  serverSentEvents,
  toAnthropicToolResults,
  toAnthropicTools,
} from 'temporal-switchyard';
import type { AnthropicStreamEvent } from 'temporal-switchyard';
import type { AgentLoopOptions, AgentLoopOutcome } from './agent-support.js';
import { postJson, runWhenMain, turnIdFor } from './agent-support.js';

type ContentBlock = { type: string; text?: string; id?: string; name?: string; input?: unknown };

/**
 * An agent loop on the Anthropic Messages API, streaming: each tool call starts in Switchyard as soon as its
 * `tool_use` block has streamed, while the model is still writing the next one.
 */
export async function runAnthropicAgent(options: AgentLoopOptions): Promise<AgentLoopOutcome> {
  const { session, tools } = options;
  const messages: Array<{ role: 'user' | 'assistant'; content: unknown }> = [{ role: 'user', content: options.prompt }];
  for (let step = 1; step <= (options.maxSteps ?? 10); step += 1) {
    const response = await postJson(
      `${options.baseUrl ?? 'https://api.anthropic.com'}/v1/messages`,
      { 'x-api-key': options.apiKey, 'anthropic-version': '2023-06-01' },
      {
        model: options.model ?? 'claude-sonnet-4-5',
        max_tokens: 4096,
        stream: true,
        tools: toAnthropicTools(tools),
        messages,
      },
    );
    const toolStream = anthropicToolStream({ turn: session.streamTurn(turnIdFor(step)), tools });
    // The assistant message for the transcript, rebuilt from the same events.
    const content: ContentBlock[] = [];
    const json = new Map<number, string>();
    for await (const { data } of serverSentEvents(response.body)) {
      const event = JSON.parse(data) as AnthropicStreamEvent & {
        content_block?: ContentBlock;
        delta?: { text?: string };
      };
      if (event.type === 'content_block_start' && event.index !== undefined && event.content_block !== undefined)
        content[event.index] = { ...event.content_block };
      if (event.type === 'content_block_delta' && event.index !== undefined) {
        if (event.delta?.type === 'text_delta') (content[event.index] as ContentBlock).text += event.delta.text ?? '';
        if (event.delta?.type === 'input_json_delta')
          json.set(event.index, (json.get(event.index) ?? '') + (event.delta.partial_json ?? ''));
      }
      await toolStream.push(event); // tools start here, while the model streams
    }
    for (const [index, text] of json) {
      const input = parseArguments(text); // '' is {}; a block cut off at max_tokens keeps {} (its result says why)
      (content[index] as ContentBlock).input = typeof input === 'string' ? {} : input;
    }
    messages.push({ role: 'assistant', content });
    if (!content.some((block) => block.type === 'tool_use'))
      return { text: content.map((block) => block.text ?? '').join(''), steps: step };
    messages.push({ role: 'user', content: toAnthropicToolResults(await toolStream.results()) });
  }
  throw new Error(`No final answer after ${options.maxSteps ?? 10} model requests`);
}

await runWhenMain(import.meta.url, 'ANTHROPIC_API_KEY', runAnthropicAgent);
