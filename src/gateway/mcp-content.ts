import type { ArtifactStore } from '../contracts/artifact-store.js';
import type { ToolResult } from '../contracts/tool-result.js';

/** A content block of an MCP `tools/call` result (the subset Switchyard produces). */
export type McpContent = { type: 'text'; text: string } | { type: 'image'; data: string; mimeType: string };

/** An MCP `tools/call` result. */
export interface McpCallResult {
  [key: string]: unknown;
  content: McpContent[];
  isError?: boolean;
}

/**
 * A Switchyard result as MCP content: the model's text, then each image read back from the artifact store (an image
 * the store no longer has becomes a text line naming it). `isError` follows the result, so a denial, a timeout or a
 * cancelled call reads as a failure to the client.
 */
export async function mcpResultOf(
  result: ToolResult,
  artifacts: Pick<ArtifactStore, 'readBytes'>,
): Promise<McpCallResult> {
  const content: McpContent[] = [{ type: 'text', text: result.modelContent }];
  for (const block of result.content ?? []) {
    if (block.type !== 'image') continue;
    try {
      const bytes = await artifacts.readBytes(block.artifact);
      content.push({ type: 'image', data: Buffer.from(bytes).toString('base64'), mimeType: block.mediaType });
    } catch (error) {
      content.push({ type: 'text', text: `[image ${block.artifact} could not be read: ${(error as Error).message}]` });
    }
  }
  return { content, ...(result.isError ? { isError: true } : {}) };
}
