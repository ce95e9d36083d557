/** One server-sent event: its `event:` name (if any) and its `data:` lines joined. */
export interface ServerSentEvent {
  event?: string;
  data: string;
}

/**
 * The events of a `text/event-stream` body (what the Anthropic, OpenAI and Gemini APIs stream with `stream: true`),
 * for agent loops that call the HTTP API without an SDK: `for await (const { data } of serverSentEvents(response.body))`.
 */
export async function* serverSentEvents(body: AsyncIterable<Uint8Array> | null): AsyncGenerator<ServerSentEvent> {
  if (body === null) throw new Error('The response has no body to read events from');
  const decoder = new TextDecoder();
  let buffer = '';
  let event: string | undefined;
  let data: string[] = [];
  const flush = (): ServerSentEvent | undefined => {
    const complete =
      data.length === 0 ? undefined : { ...(event === undefined ? {} : { event }), data: data.join('\n') };
    event = undefined;
    data = [];
    return complete;
  };
  for await (const chunk of body) {
    buffer += decoder.decode(chunk, { stream: true });
    let newline = buffer.search(/\r?\n/);
    while (newline >= 0) {
      const line = buffer.slice(0, newline);
      buffer = buffer.slice(buffer[newline] === '\r' ? newline + 2 : newline + 1);
      if (line === '') {
        const complete = flush();
        if (complete !== undefined) yield complete;
      } else if (line.startsWith('data:')) data.push(line.slice(5).replace(/^ /, ''));
      else if (line.startsWith('event:')) event = line.slice(6).trim();
      newline = buffer.search(/\r?\n/);
    }
  }
  const last = flush();
  if (last !== undefined) yield last;
}
