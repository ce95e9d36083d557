// The payload converter of Switchyard's workers and clients: the SDK's default converter (undefined, binary, JSON, in
// that order), with JSON text turned into UTF-8 bytes and back by the runtime's own `TextEncoder` and `TextDecoder`.
// The SDK's JSON converter runs a UTF-8 coder written in JavaScript; under `npm run bench:profile` it was the
// largest single item of the worker's main thread, on activity results (BENCHMARKS.md, "Where the CPU goes").
//
// The bytes are the same: JSON text holds no lone surrogates (`JSON.stringify` escapes them), and for any other text
// both coders write standard UTF-8. A payload written here reads back with any Temporal SDK's default converter, a
// history written before reads back here, and the wire does not change. Workflow code runs it too: the Temporal
// worker puts Node's `TextEncoder` and `TextDecoder` into every workflow context.
//
// Plain JavaScript (types in payload-converter.d.ts): the Temporal worker loads a payload converter with `require` by
// path, in the worker's own process as well as into the workflow bundle, and Node requires a .js file but not a .ts
// one. `npm run build` copies both files to dist/.
import {
  BinaryPayloadConverter,
  CompositePayloadConverter,
  JsonPayloadConverter,
  METADATA_ENCODING_KEY,
  UndefinedPayloadConverter,
  ValueError,
  encodingKeys,
} from '@temporalio/common';

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** `json/plain` payloads, written and read with the runtime's UTF-8 coder. */
export class NativeJsonPayloadConverter extends JsonPayloadConverter {
  /**
   * @param {unknown} value
   * @returns {import('@temporalio/common').Payload | undefined}
   */
  toPayload(value) {
    if (value === undefined) return undefined;
    let json;
    try {
      json = JSON.stringify(value);
    } catch {
      return undefined;
    }
    return { metadata: { [METADATA_ENCODING_KEY]: encodingKeys.METADATA_ENCODING_JSON }, data: encoder.encode(json) };
  }

  /**
   * @param {import('@temporalio/common').Payload} content
   * @returns {unknown}
   */
  fromPayload(content) {
    if (content.data === undefined || content.data === null) throw new ValueError('Got payload with no data');
    return JSON.parse(decoder.decode(content.data));
  }
}

/** The SDK's default payload converter with the JSON step above. */
export const payloadConverter = new CompositePayloadConverter(
  new UndefinedPayloadConverter(),
  new BinaryPayloadConverter(),
  new NativeJsonPayloadConverter(),
);
