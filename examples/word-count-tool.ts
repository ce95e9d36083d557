import {
  NativeConnection,
  ToolUseError,
  builtinTools,
  createSwitchyardWorker,
  defineTool,
  temporalConnectConfigFromEnv,
} from 'temporal-switchyard/worker';
import { z } from 'zod';

export const wordCountTool = defineTool({
  name: 'WordCount',
  description: 'Counts the words in a text.',
  inputSchema: z.strictObject({ text: z.string().describe('The text to count') }),
  concurrentSafe: true, // may run beside other concurrency-safe calls
  readOnly: true, // needs no approval in the default permission mode
  timeout: { defaultMs: 5_000 },
  summarize: (input) => `${input.text.length} characters`,
  async execute(input, context) {
    context.signal.throwIfAborted();
    const words = input.text.split(/\s+/).filter(Boolean).length;
    if (words === 0) throw new ToolUseError('The text has no words.'); // the model sees <tool_use_error>…
    return `${words} words`;
  },
});

export async function runWorkerWithWordCount(): Promise<void> {
  // TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE, TEMPORAL_API_KEY, TEMPORAL_TLS_*, or a temporal.toml profile
  const temporal = temporalConnectConfigFromEnv();
  const connection = await NativeConnection.connect(temporal.connectionOptions);
  const worker = await createSwitchyardWorker({
    connection,
    namespace: temporal.namespace,
    tools: [...builtinTools(), wordCountTool],
  });
  await worker.run();
}
