import { z } from 'zod';
import type { ClientToolSpec } from '../../contracts/client-tools.js';
import type { Tool } from '../../tools/define-tool.js';

/**
 * Client tools (`SessionOptions.clientTools`) in the shape the model adapters take, so `toAnthropicTools([...tools,
 * ...clientToolsForModel(specs)])` offers them beside the worker's tools with their own JSON Schemas. They never run
 * here: the session parks their calls until `SessionHandle.submitToolResult` answers them.
 */
export function clientToolsForModel(specs: readonly ClientToolSpec[]): Tool[] {
  return specs.map((spec) =>
    Object.assign(
      {
        name: spec.name,
        description: spec.description,
        inputSchema: z.record(z.string(), z.unknown()),
        readOnly: spec.readOnly === true,
        execute: () =>
          Promise.reject(new Error(`${spec.name} is a client tool: answer its calls with submitToolResult`)),
      } satisfies Tool,
      { mcpInputSchema: spec.inputSchema },
    ),
  );
}
