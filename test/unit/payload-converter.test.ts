import { createRequire } from 'node:module';
import { defaultPayloadConverter, ValueError } from '@temporalio/common';
import type { Payload } from '@temporalio/common';
import { describe, expect, it } from 'vitest';
import { payloadConverterPath, switchyardDataConverter } from '../../src/config/data-converter.js';
import { payloadConverter } from '../../src/contracts/payload-converter.js';

// Switchyard's payload converter must write exactly the bytes of the SDK's default one and read what it writes:
// workers and clients with either converter share sessions, and histories recorded before keep replaying.

const values: Array<[string, unknown]> = [
  ['ASCII text', { text: 'hello', n: 42, ok: true, none: null }],
  ['a Read result with line arrows', { content: '     1→const a = 1;\n     2→// ünïcödé ✓\n' }],
  ['characters outside the BMP', { emoji: '🚦🛤️', han: '工具调用' }],
  ['lone surrogates', { high: 'a\ud800b', low: '\udc00', pair: '\ud83d\ude80' }],
  ['control characters and quotes', { text: '\u0000\u001f"\\\n\t' }],
  ['an array at the top', [1, 'two', { three: 3 }]],
  ['a bare string', 'just text'],
  ['a number', 3.25],
  ['null', null],
  ['a large text', { text: 'x→'.repeat(100_000) }],
];

const bytes = (payload: Payload | undefined) => Buffer.from(payload?.data ?? new Uint8Array()).toString('hex');
const metadata = (payload: Payload | undefined) =>
  Object.fromEntries(
    Object.entries(payload?.metadata ?? {}).map(([key, value]) => [key, Buffer.from(value).toString()]),
  );

describe('the payload converter', () => {
  it.each(values)('writes the bytes of the default converter: %s', (_name, value) => {
    const ours = payloadConverter.toPayload(value);
    const theirs = defaultPayloadConverter.toPayload(value);
    expect(metadata(ours)).toEqual({ encoding: 'json/plain' });
    expect(metadata(ours)).toEqual(metadata(theirs));
    expect(bytes(ours)).toBe(bytes(theirs));
  });

  it.each(values)('reads what the default converter writes, and the other way round: %s', (_name, value) => {
    const expected = JSON.parse(JSON.stringify(value)) as unknown;
    expect(payloadConverter.fromPayload(defaultPayloadConverter.toPayload(value))).toEqual(expected);
    expect(defaultPayloadConverter.fromPayload(payloadConverter.toPayload(value))).toEqual(expected);
  });

  it('keeps the default order: undefined and bytes before JSON', () => {
    const none = payloadConverter.toPayload(undefined);
    expect(metadata(none)).toEqual({ encoding: 'binary/null' });
    expect(payloadConverter.fromPayload(none)).toBeUndefined();
    const raw = payloadConverter.toPayload(new Uint8Array([1, 2, 3]));
    expect(metadata(raw)).toEqual({ encoding: 'binary/plain' });
    expect([...payloadConverter.fromPayload<Uint8Array>(raw)]).toEqual([1, 2, 3]);
  });

  it('refuses what JSON cannot hold, as the default converter does', () => {
    expect(() => payloadConverter.toPayload({ big: 1n })).toThrow(/Unable to convert/);
    expect(() => defaultPayloadConverter.toPayload({ big: 1n })).toThrow(/Unable to convert/);
    expect(() => payloadConverter.fromPayload({ metadata: { encoding: Buffer.from('json/plain') } })).toThrow(
      ValueError,
    );
  });

  it('is what the data converter option names, and Node can require it by that path (the Temporal worker does)', () => {
    expect(switchyardDataConverter).toEqual({ payloadConverterPath });
    const loaded = createRequire(import.meta.url)(payloadConverterPath) as { payloadConverter: unknown };
    expect(loaded.payloadConverter).toBeDefined();
    expect(bytes((loaded.payloadConverter as typeof payloadConverter).toPayload({ a: '→' }))).toBe(
      bytes(defaultPayloadConverter.toPayload({ a: '→' })),
    );
  });
});
