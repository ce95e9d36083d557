import { openAIChatToolStream, serverSentEvents, toOpenAIChatTools, toOpenAIToolMessages } from 'temporal-switchyard';
import type { OpenAIChatStreamChunk } from 'temporal-switchyard';
import type { AgentLoopOptions, AgentLoopOutcome } from './agent-support.js';
import { postJson, runWhenMain, turnIdFor } from './agent-support.js';

type Chunk = OpenAIChatStreamChunk & { choices?: Array<{ delta?: { content?: string | null } }> };
type AssistantToolCall = { id: string; type: 'function'; function: { name: string; arguments: string } };

/** An agent loop on OpenAI Chat Completions, streaming: tool calls start as each one has streamed. */
export async function runOpenAIChatAgent(options: AgentLoopOptions): Promise<AgentLoopOutcome> {
  const { session, tools } = options;
  const messages: unknown[] = [{ role: 'user', content: options.prompt }];
  for (let step = 1; step <= (options.maxSteps ?? 10); step += 1) {
    const response = await postJson(
      `${options.baseUrl ?? 'https://api.openai.com'}/v1/chat/completions`,
      { authorization: `Bearer ${options.apiKey}` },
      { model: options.model ?? 'gpt-4.1', stream: true, tools: toOpenAIChatTools(tools), messages },
    );
    const toolStream = openAIChatToolStream({ turn: session.streamTurn(turnIdFor(step)), tools });
    // The assistant message for the transcript, rebuilt from the same chunks.
    let text = '';
    const toolCalls: AssistantToolCall[] = [];
    for await (const { data } of serverSentEvents(response.body)) {
      if (data === '[DONE]') break;
      const chunk = JSON.parse(data) as Chunk;
      const delta = chunk.choices?.[0]?.delta;
      text += delta?.content ?? '';
      for (const fragment of delta?.tool_calls ?? []) {
        const call = (toolCalls[fragment.index] ??= {
          id: '',
          type: 'function',
          function: { name: '', arguments: '' },
        });
        call.id ||= fragment.id ?? '';
        call.function.name += fragment.function?.name ?? '';
        call.function.arguments += fragment.function?.arguments ?? '';
      }
      await toolStream.push(chunk); // tools start here, while the model streams
    }
    messages.push({
      role: 'assistant',
      content: text === '' ? null : text,
      ...(toolCalls.length > 0 ? { tool_calls: toolCalls } : {}),
    });
    if (toolCalls.length === 0) return { text, steps: step };
    messages.push(...toOpenAIToolMessages(await toolStream.results()));
  }
  throw new Error(`No final answer after ${options.maxSteps ?? 10} model requests`);
}

await runWhenMain(import.meta.url, 'OPENAI_API_KEY', runOpenAIChatAgent);
