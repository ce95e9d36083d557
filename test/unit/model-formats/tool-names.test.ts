import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { toolNameMap, toolNameRules } from '../../../src/client/model-formats/tool-names.js';
import type { ModelProvider } from '../../../src/client/model-formats/shared.js';
import { defineTool } from '../../../src/tools/define-tool.js';
import { builtinTools } from '../../../src/tools/builtin.js';

const named = (name: string) =>
  defineTool({ name, description: 'x', inputSchema: z.strictObject({}), execute: async () => '' });
const providers: ModelProvider[] = ['anthropic', 'openai-chat', 'openai-responses', 'gemini', 'ai-sdk'];

describe('tool names per provider', () => {
  it('keeps every built-in name as it is for every provider', () => {
    for (const provider of providers) {
      const names = toolNameMap(builtinTools(), provider);
      for (const tool of builtinTools()) expect(names.toModel(tool.name), `${provider} ${tool.name}`).toBe(tool.name);
    }
  });

  it('renames what a provider forbids, reversibly, and only there', () => {
    const tools = [named('mcp.notes:search'), named('9lives'), named('mcp_notes_search')];
    const anthropic = toolNameMap(tools, 'anthropic');
    // `mcp_notes_search` is taken by a real tool, so the renamed one gets a hash suffix instead of colliding.
    const renamed = anthropic.toModel('mcp.notes:search');
    expect(renamed).toMatch(/^mcp_notes_search_[0-9a-f]{8}$/);
    expect(anthropic.fromModel(renamed)).toBe('mcp.notes:search');
    expect(anthropic.toModel('mcp_notes_search')).toBe('mcp_notes_search');
    expect(anthropic.toModel('9lives')).toBe('9lives');
    // Gemini allows `.` and `:` but wants a letter or `_` first.
    const gemini = toolNameMap(tools, 'gemini');
    expect(gemini.toModel('mcp.notes:search')).toBe('mcp.notes:search');
    expect(gemini.toModel('9lives')).toBe('_9lives');
    expect(gemini.fromModel('_9lives')).toBe('9lives');
    for (const provider of providers) {
      const names = toolNameMap(tools, provider);
      for (const tool of tools)
        expect(toolNameRules[provider].pattern.test(names.toModel(tool.name)), `${provider} ${tool.name}`).toBe(true);
    }
  });
});
