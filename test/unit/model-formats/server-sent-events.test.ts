import { describe, expect, it } from 'vitest';
import { serverSentEvents } from '../../../src/client/model-formats/server-sent-events.js';

async function* chunks(text: string, size: number): AsyncGenerator<Uint8Array> {
  const bytes = new TextEncoder().encode(text);
  for (let start = 0; start < bytes.length; start += size) yield bytes.slice(start, start + size);
}

describe('serverSentEvents', () => {
  it('reads named events and data-only events however the bytes are split', async () => {
    // An Anthropic stream (named events, LF) followed by an OpenAI one (data only, CRLF, [DONE]).
    const text =
      'event: message_start\ndata: {"type":"message_start"}\n\nevent: ping\ndata: {"type": "ping"}\n\ndata: {"choices":[]}\r\n\r\ndata: [DONE]\r\n\r\n';
    for (const size of [1, 7, 1000]) {
      const events = [];
      for await (const event of serverSentEvents(chunks(text, size))) events.push(event);
      expect(events).toEqual([
        { event: 'message_start', data: '{"type":"message_start"}' },
        { event: 'ping', data: '{"type": "ping"}' },
        { data: '{"choices":[]}' },
        { data: '[DONE]' },
      ]);
    }
  });
});
