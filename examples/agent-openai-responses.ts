import { callsFromOpenAIResponses, toOpenAIResponsesOutputs, toOpenAIResponsesTools } from 'temporal-switchyard';
import type { OpenAIResponsesOutputItem } from 'temporal-switchyard';
import type { AgentLoopOptions, AgentLoopOutcome } from './agent-support.js';
import { postJson, runWhenMain, turnIdFor } from './agent-support.js';

type OutputItem = OpenAIResponsesOutputItem & { content?: Array<{ type: string; text?: string }> };

/** An agent loop on the OpenAI Responses API: one whole turn per reply, outputs paired by `call_id`. */
export async function runOpenAIResponsesAgent(options: AgentLoopOptions): Promise<AgentLoopOutcome> {
  const { session, tools } = options;
  const input: unknown[] = [{ role: 'user', content: options.prompt }];
  for (let step = 1; step <= (options.maxSteps ?? 10); step += 1) {
    const response = await postJson(
      `${options.baseUrl ?? 'https://api.openai.com'}/v1/responses`,
      { authorization: `Bearer ${options.apiKey}` },
      { model: options.model ?? 'gpt-4.1', tools: toOpenAIResponsesTools(tools), input },
    );
    const { output } = (await response.json()) as { output: OutputItem[] };
    input.push(...output); // the reply's items (function_call items included) go back as input
    const calls = callsFromOpenAIResponses(output, { tools });
    if (calls.length === 0) {
      const text = output
        .flatMap((item) => (item.type === 'message' ? (item.content ?? []) : []))
        .map((part) => part.text ?? '')
        .join('');
      return { text, steps: step };
    }
    const turn = await session.executeTurn({ turnId: turnIdFor(step), calls });
    input.push(...toOpenAIResponsesOutputs(turn));
  }
  throw new Error(`No final answer after ${options.maxSteps ?? 10} model requests`);
}

await runWhenMain(import.meta.url, 'OPENAI_API_KEY', runOpenAIResponsesAgent);
