// Types of payload-converter.js (plain JavaScript, so that the Temporal worker can `require` it by path).
import type { CompositePayloadConverter, JsonPayloadConverter, Payload } from '@temporalio/common';

/** `json/plain` payloads, written and read with the runtime's UTF-8 coder. */
export declare class NativeJsonPayloadConverter extends JsonPayloadConverter {
  toPayload(value: unknown): Payload | undefined;
  fromPayload<T>(content: Payload): T;
}

/** The SDK's default payload converter with the JSON step of `NativeJsonPayloadConverter`. */
export declare const payloadConverter: CompositePayloadConverter;
