import { pathToFileURL } from 'node:url';
import { SwitchyardClient, callsFromAiSdk, toAiSdkToolResults, toAiSdkTools } from 'temporal-switchyard';
import type { AiSdkToolCallPart, JsonSchema, SessionHandle } from 'temporal-switchyard';
import { builtinTools } from 'temporal-switchyard/worker';
import type { Tool } from 'temporal-switchyard/worker';
import type { AgentLoopOutcome } from './agent-support.js';
import { turnIdFor } from './agent-support.js';

/** The part of the AI SDK's `generateText` the loop uses (Switchyard needs no SDK; you pass yours in). */
export type GenerateText = (request: {
  model: unknown;
  tools: Record<string, unknown>;
  messages: unknown[];
}) => Promise<{
  text: string;
  toolCalls: AiSdkToolCallPart[];
  response: { messages: unknown[] };
}>;

export interface AiSdkAgentOptions {
  session: SessionHandle;
  tools: readonly Tool[];
  prompt: string;
  generateText: GenerateText;
  /** The SDK's model, e.g. `openai('gpt-4.1')`. */
  model: unknown;
  /** The SDK's `jsonSchema` helper; without it the tools carry plain JSON Schema objects. */
  jsonSchema?: (schema: JsonSchema) => unknown;
  maxSteps?: number;
}

/**
 * An agent loop on the Vercel AI SDK: tools without `execute`, so `generateText` stops at the model's tool calls;
 * Switchyard runs them and `tool-result` parts go back in a `tool` message.
 */
export async function runAiSdkAgent(options: AiSdkAgentOptions): Promise<AgentLoopOutcome> {
  const { session, tools } = options;
  const sdkTools =
    options.jsonSchema === undefined ? toAiSdkTools(tools) : toAiSdkTools(tools, { jsonSchema: options.jsonSchema });
  const messages: unknown[] = [{ role: 'user', content: options.prompt }];
  for (let step = 1; step <= (options.maxSteps ?? 10); step += 1) {
    const result = await options.generateText({ model: options.model, tools: sdkTools, messages });
    messages.push(...result.response.messages);
    if (result.toolCalls.length === 0) return { text: result.text, steps: step };
    const turn = await session.executeTurn({
      turnId: turnIdFor(step),
      calls: callsFromAiSdk(result.toolCalls, { tools }),
    });
    messages.push({ role: 'tool', content: toAiSdkToolResults(turn, { tools, toolCalls: result.toolCalls }) });
  }
  throw new Error(`No final answer after ${options.maxSteps ?? 10} model requests`);
}

/** Run directly with OPENAI_API_KEY set and `ai` and `@ai-sdk/openai` installed (they are not Switchyard dependencies). */
async function main(): Promise<void> {
  if (process.env.OPENAI_API_KEY === undefined || process.env.OPENAI_API_KEY === '') {
    console.error('Set OPENAI_API_KEY (and npm install ai @ai-sdk/openai) to run this example against the real API.');
    process.exitCode = 1;
    return;
  }
  const [sdkName, providerName] = ['ai', '@ai-sdk/openai']; // names in variables: the SDK is optional, not a dependency
  const sdk = (await import(sdkName)) as { generateText: GenerateText; jsonSchema: (schema: JsonSchema) => unknown };
  const provider = (await import(providerName)) as { openai: (model: string) => unknown };
  const client = await SwitchyardClient.connect();
  const session = await client.startSession(`agent-${Date.now().toString(36)}`, { cwd: process.cwd() });
  const outcome = await runAiSdkAgent({
    session,
    tools: builtinTools(),
    prompt: process.argv[2] ?? 'Read README.md and say in one sentence what this project is.',
    generateText: sdk.generateText,
    jsonSchema: sdk.jsonSchema,
    model: provider.openai('gpt-4.1'),
  });
  console.log(outcome.text);
  await client.client.connection.close();
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) await main();
