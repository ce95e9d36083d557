import { callsFromAnthropic, toAnthropicToolResults, toAnthropicTools } from 'temporal-switchyard';
import type { AnthropicContentBlock, SessionHandle } from 'temporal-switchyard';
import type { Tool } from 'temporal-switchyard/worker';

/** A whole agent: ask the model, run its tool calls through Switchyard, send the results back, until it answers. */
export async function agentLoop(options: {
  session: SessionHandle;
  tools: Tool[];
  prompt: string;
  apiKey: string;
  baseUrl?: string;
}): Promise<string> {
  const messages: Array<{ role: 'user' | 'assistant'; content: unknown }> = [{ role: 'user', content: options.prompt }];
  for (let step = 1; ; step += 1) {
    const response = await fetch(`${options.baseUrl ?? 'https://api.anthropic.com'}/v1/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': options.apiKey, 'anthropic-version': '2023-06-01' },
      body: JSON.stringify({
        model: 'claude-sonnet-4-5',
        max_tokens: 4096,
        tools: toAnthropicTools(options.tools),
        messages,
      }),
    });
    const reply = (await response.json()) as { content: AnthropicContentBlock[]; stop_reason: string };
    messages.push({ role: 'assistant', content: reply.content });
    if (reply.stop_reason !== 'tool_use')
      return reply.content
        .map((block) => ('text' in block && typeof block.text === 'string' ? block.text : ''))
        .join('');
    // One model reply is one Switchyard turn: grouping, approvals, deadlines, results in the model's order.
    const turn = await options.session.executeTurn({
      turnId: `turn-${step}`,
      calls: callsFromAnthropic(reply.content, { tools: options.tools }),
    });
    messages.push({ role: 'user', content: toAnthropicToolResults(turn) });
  }
}
