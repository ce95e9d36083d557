// The model call, as an activity: Anthropic's Messages API over fetch (or any server speaking it, such as the
// scripted model in `scripted-model.ts`). Runs in Node, never in the workflow.
import { ApplicationFailure, Context } from '@temporalio/activity';
import { callsFromAnthropic, toAnthropicToolResults, toAnthropicTools } from 'temporal-switchyard';
import type { ToolCall, ToolResult } from 'temporal-switchyard';
import type { Tool } from 'temporal-switchyard/worker';

/** A content block of an assistant message as the API returns it. */
export interface AssistantBlock {
  type: string;
  text?: string;
  id?: string;
  name?: string;
  input?: unknown;
}

/** One model reply and its tool results, as the workflow keeps them. */
export interface AgentStep {
  content: AssistantBlock[];
  results: ToolResult[];
}

export interface ModelRequest {
  prompt: string;
  cwd: string;
  transcript: AgentStep[];
}

export interface ModelReply {
  content: AssistantBlock[];
  /** The reply's tool calls (`tool_use` blocks), in order. */
  calls: ToolCall[];
  /** The reply's text. */
  text: string;
}

export interface AgentActivities {
  callModel(request: ModelRequest): Promise<ModelReply>;
}

export interface ModelOptions {
  /** The tools the model may call: the worker's tools. */
  tools: readonly Tool[];
  apiKey: string;
  /** Default `https://api.anthropic.com`. */
  baseUrl?: string;
  /** Default `claude-sonnet-4-5`. */
  model?: string;
}

const systemPrompt = (cwd: string): string =>
  `You are a coding agent. Your workspace is ${cwd}; tool paths may be relative to it. ` +
  'Look before you change anything, make the smallest change that does the task, run the tests to check, then say in one or two sentences what you did.';

/** The agent's activities, given the model to call. */
export function createAgentActivities(options: ModelOptions): AgentActivities {
  const tools = toAnthropicTools(options.tools);
  return {
    async callModel(request) {
      const messages: Array<{ role: 'user' | 'assistant'; content: unknown }> = [
        { role: 'user', content: request.prompt },
      ];
      for (const step of request.transcript) {
        messages.push({ role: 'assistant', content: step.content });
        messages.push({ role: 'user', content: toAnthropicToolResults(step.results) });
      }
      const response = await fetch(`${options.baseUrl ?? 'https://api.anthropic.com'}/v1/messages`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': options.apiKey, 'anthropic-version': '2023-06-01' },
        body: JSON.stringify({
          model: options.model ?? 'claude-sonnet-4-5',
          max_tokens: 4096,
          system: systemPrompt(request.cwd),
          tools,
          messages,
        }),
        signal: Context.current().cancellationSignal,
      });
      if (!response.ok) {
        const message = `The model API answered ${response.status}: ${(await response.text()).slice(0, 500)}`;
        // A bad request or a bad key does not get better by retrying; overload and server errors may.
        if (response.status >= 400 && response.status < 500 && response.status !== 408 && response.status !== 429)
          throw ApplicationFailure.nonRetryable(message, 'ModelRequestRejected');
        throw new Error(message);
      }
      const body = (await response.json()) as { content?: AssistantBlock[] };
      const content = body.content ?? [];
      return {
        content,
        calls: callsFromAnthropic(content, { tools: options.tools }),
        text: content.map((block) => (block.type === 'text' ? (block.text ?? '') : '')).join(''),
      };
    },
  };
}
