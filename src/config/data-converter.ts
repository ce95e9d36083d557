// Where Switchyard's payload converter is, for the Temporal SDK's `dataConverter` option of workers, bundles and
// clients (src/contracts/payload-converter.js says what it changes: nothing on the wire, less CPU).
import { fileURLToPath } from 'node:url';
import type { DataConverter } from '@temporalio/common';

/**
 * Path of Switchyard's payload converter module. Always the .js file (there is no .ts of it): from the sources as
 * from dist/, which `npm run build` copies it to.
 */
export const payloadConverterPath = fileURLToPath(new URL('../contracts/payload-converter.js', import.meta.url));

/**
 * The `dataConverter` option of Switchyard's workers and clients. Payloads are the SDK's default JSON, so a client
 * or worker with Temporal's default converter (any SDK) reads and writes the same sessions; this one only spends
 * less CPU on them. `new Client({ connection, dataConverter: switchyardDataConverter })`.
 */
export const switchyardDataConverter: DataConverter = { payloadConverterPath };
