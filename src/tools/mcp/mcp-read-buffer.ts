/**
 * A bounded reader for an MCP stdio connection: newline-delimited JSON-RPC messages, each at most `maxBytes`. The
 * MCP SDK's own reader drops the whole connection when one message passes its limit, failing every call in flight on
 * it. This one skips the oversized message instead, keeping only its first and last bytes, and answers the request it
 * responded to with a JSON-RPC error naming the size: that call fails with a clear message, and the connection and
 * the other calls on it carry on. Memory stays within `maxBytes` whatever the server writes.
 */
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { deserializeMessage } from '@modelcontextprotocol/sdk/shared/stdio.js';

/** Bytes kept of each end of an oversized message, to find the id of the request it answers. */
const EDGE_BYTES = 256;
const NEWLINE = 0x0a;

type Pending = { kind: 'line'; line: Buffer } | { kind: 'oversized'; head: string; tail: string; bytes: number };

export class BoundedReadBuffer {
  #chunks: Buffer[] = [];
  #size = 0;
  #oversized: { head: Buffer; tail: Buffer; bytes: number } | undefined;
  readonly #ready: Pending[] = [];

  constructor(
    readonly maxBytes: number,
    /** The error message for a request whose response was `bytes` long. */
    private readonly describe: (bytes: number, maxBytes: number) => string,
    /** Told about an oversized message that answers no request (a notification, a request of the server's). */
    private readonly onDropped?: (bytes: number) => void,
  ) {}

  append(chunk: Buffer): void {
    let rest = chunk;
    while (rest.length > 0) {
      const newline = rest.indexOf(NEWLINE);
      const part = newline === -1 ? rest : rest.subarray(0, newline);
      this.#take(part);
      if (newline === -1) return;
      this.#endLine();
      rest = rest.subarray(newline + 1);
    }
  }

  readMessage(): JSONRPCMessage | null {
    for (;;) {
      const next = this.#ready.shift();
      if (next === undefined) return null;
      if (next.kind === 'line') {
        const text = next.line.toString('utf8').replace(/\r$/, '');
        if (text.trim() === '') continue;
        return deserializeMessage(text);
      }
      const id = responseId(next.head, next.tail);
      if (id === undefined) {
        this.onDropped?.(next.bytes);
        continue;
      }
      return { jsonrpc: '2.0', id, error: { code: -32603, message: this.describe(next.bytes, this.maxBytes) } };
    }
  }

  clear(): void {
    this.#chunks = [];
    this.#size = 0;
    this.#oversized = undefined;
    this.#ready.length = 0;
  }

  #take(part: Buffer): void {
    if (part.length === 0) return;
    const oversized = this.#oversized;
    if (oversized !== undefined) {
      oversized.bytes += part.length;
      oversized.tail = lastBytes(Buffer.concat([oversized.tail, part]), EDGE_BYTES);
      return;
    }
    this.#chunks.push(Buffer.from(part));
    this.#size += part.length;
    if (this.#size <= this.maxBytes) return;
    const whole = Buffer.concat(this.#chunks);
    this.#oversized = { head: whole.subarray(0, EDGE_BYTES), tail: lastBytes(whole, EDGE_BYTES), bytes: whole.length };
    this.#chunks = [];
    this.#size = 0;
  }

  #endLine(): void {
    const oversized = this.#oversized;
    if (oversized !== undefined) {
      this.#ready.push({
        kind: 'oversized',
        head: oversized.head.toString('utf8'),
        tail: oversized.tail.toString('utf8'),
        bytes: oversized.bytes,
      });
      this.#oversized = undefined;
      return;
    }
    const line = this.#chunks.length === 1 ? (this.#chunks[0] as Buffer) : Buffer.concat(this.#chunks);
    this.#chunks = [];
    this.#size = 0;
    this.#ready.push({ kind: 'line', line });
  }
}

function lastBytes(buffer: Buffer, count: number): Buffer {
  return buffer.length <= count ? Buffer.from(buffer) : Buffer.from(buffer.subarray(buffer.length - count));
}

/**
 * The id of the response an oversized message is, from its first or last bytes: `{"jsonrpc":"2.0","id":7,…` or
 * `…,"jsonrpc":"2.0","id":7}` (where the SDK's servers put it). Undefined when neither end names one.
 */
function responseId(head: string, tail: string): string | number | undefined {
  const atEnd = /"id"\s{0,8}:\s{0,8}(-?\d{1,15}|"[^"\\]{0,200}")\s{0,8}\}\s{0,8}$/.exec(tail.replace(/\r$/, ''));
  const atStart =
    /^\s{0,8}\{\s{0,8}(?:"jsonrpc"\s{0,8}:\s{0,8}"2\.0"\s{0,8},\s{0,8})?"id"\s{0,8}:\s{0,8}(-?\d{1,15}|"[^"\\]{0,200}")/.exec(
      head,
    );
  const raw = atEnd?.[1] ?? atStart?.[1];
  if (raw === undefined) return undefined;
  return raw.startsWith('"') ? raw.slice(1, -1) : Number(raw);
}
