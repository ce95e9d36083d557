import { callsFromGemini, toGeminiFunctionResponses, toGeminiTools } from 'temporal-switchyard';
import type { GeminiPart } from 'temporal-switchyard';
import type { AgentLoopOptions, AgentLoopOutcome } from './agent-support.js';
import { postJson, runWhenMain, turnIdFor } from './agent-support.js';

type Content = { role: 'user' | 'model'; parts: Array<GeminiPart & { text?: string }> };

/** An agent loop on the Gemini API (generateContent): functionCall parts in, functionResponse parts out. */
export async function runGeminiAgent(options: AgentLoopOptions): Promise<AgentLoopOutcome> {
  const { session, tools } = options;
  const contents: unknown[] = [{ role: 'user', parts: [{ text: options.prompt }] }];
  for (let step = 1; step <= (options.maxSteps ?? 10); step += 1) {
    const model = options.model ?? 'gemini-2.5-flash';
    const response = await postJson(
      `${options.baseUrl ?? 'https://generativelanguage.googleapis.com'}/v1beta/models/${model}:generateContent`,
      { 'x-goog-api-key': options.apiKey },
      { contents, tools: toGeminiTools(tools) },
    );
    const { candidates } = (await response.json()) as { candidates: Array<{ content: Content }> };
    const content = candidates[0]?.content ?? { role: 'model', parts: [] };
    contents.push(content);
    const calls = callsFromGemini(content.parts, { tools });
    if (calls.length === 0) return { text: content.parts.map((part) => part.text ?? '').join(''), steps: step };
    const turn = await session.executeTurn({ turnId: turnIdFor(step), calls });
    contents.push({ role: 'user', parts: toGeminiFunctionResponses(turn, { functionCalls: content.parts }) });
  }
  throw new Error(`No final answer after ${options.maxSteps ?? 10} model requests`);
}

await runWhenMain(import.meta.url, 'GEMINI_API_KEY', runGeminiAgent);
