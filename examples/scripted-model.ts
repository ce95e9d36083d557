// A stand-in for a model, so an agent loop runs without an API key (the README's walkthrough, and CI): it answers
// the nth request with the nth scripted reply, in the Anthropic Messages API's shape. Swap it for the real API call.
import type { AnthropicContentBlock } from 'temporal-switchyard';

/** A reply as the Messages API returns it: the fields an agent loop reads. */
export interface ModelReply {
  content: Array<AnthropicContentBlock & { text?: string }>;
  stop_reason: 'tool_use' | 'end_turn';
}

/** The model: `tool_use` replies while the script has them, then text. */
export function scriptedModel(replies: Array<ModelReply['content']>) {
  return async (request: { tools?: unknown; messages: readonly unknown[] }): Promise<ModelReply> => {
    // One user message, then an assistant and a user message per step: the step is the count of replies so far.
    const content = replies[Math.floor(request.messages.length / 2)] ?? [{ type: 'text', text: 'Done.' }];
    return { content, stop_reason: content.some((block) => block.type === 'tool_use') ? 'tool_use' : 'end_turn' };
  };
}
