import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { ToolOutput } from '../../src/tools/define-tool.js';
import { bashTool } from '../../src/tools/builtin/bash.js';
import { editTool } from '../../src/tools/builtin/edit.js';
import { outputFromUpdatedMcpOutput } from '../../src/tools/mcp/mcp.js';
import { writeTool } from '../../src/tools/builtin/write.js';
import { scratchDir } from '../support/scratch.js';
import { toolContext } from '../support/tool-context.js';

function hookResponseOf(output: ToolOutput): unknown {
  return typeof output === 'string' ? undefined : output.hookResponse;
}

describe("built-in tools give PostToolUse hooks Claude Code's tool_response", () => {
  it('Bash: stdout, stderr, interrupted, isImage, exitCode', async () => {
    const cwd = await scratchDir();
    const output = await bashTool.execute({ command: 'echo out; echo err >&2' }, toolContext({ cwd }));
    expect(hookResponseOf(output)).toEqual({
      stdout: 'out\n',
      stderr: 'err\n',
      interrupted: false,
      isImage: false,
      exitCode: 0,
    });
  });

  it('Write: create, then update with the original file and a structured patch', async () => {
    const cwd = await scratchDir();
    const filePath = path.join(cwd, 'a.txt');
    expect(
      hookResponseOf(await writeTool.execute({ file_path: filePath, content: 'one\n' }, toolContext({ cwd }))),
    ).toMatchObject({
      type: 'create',
      filePath,
      content: 'one\n',
      originalFile: null,
    });
    const update = hookResponseOf(
      await writeTool.execute({ file_path: filePath, content: 'two\n' }, toolContext({ cwd })),
    );
    expect(update).toMatchObject({ type: 'update', filePath, content: 'two\n', originalFile: 'one\n' });
    expect((update as { structuredPatch: Array<{ lines: string[] }> }).structuredPatch[0]?.lines).toEqual([
      '-one',
      '+two',
    ]);
  });

  it('Edit: filePath, oldString, newString, replaceAll, originalFile, userModified', async () => {
    const cwd = await scratchDir();
    const filePath = path.join(cwd, 'b.txt');
    await writeFile(filePath, 'alpha beta\n');
    const response = hookResponseOf(
      await editTool.execute({ file_path: filePath, old_string: 'beta', new_string: 'gamma' }, toolContext({ cwd })),
    );
    expect(response).toMatchObject({
      filePath,
      oldString: 'beta',
      newString: 'gamma',
      replaceAll: false,
      originalFile: 'alpha beta\n',
      userModified: false,
    });
  });
});

describe('outputFromUpdatedMcpOutput (a hook replacing an MCP output)', () => {
  it('takes content blocks, a tools/call result or a string', () => {
    expect(
      outputFromUpdatedMcpOutput([
        { type: 'text', text: 'a' },
        { type: 'text', text: 'b' },
      ]),
    ).toBe('a\nb');
    expect(outputFromUpdatedMcpOutput({ content: [{ type: 'text', text: 'failed' }], isError: true })).toMatchObject({
      content: 'failed',
      isError: true,
    });
    expect(outputFromUpdatedMcpOutput('plain')).toBe('plain');
  });

  it("throws on anything else, so the hook's replacement is ignored", () => {
    expect(() => outputFromUpdatedMcpOutput(42)).toThrow(/must be a string, an array of MCP content blocks/);
    expect(() => outputFromUpdatedMcpOutput([{ text: 'no type' }])).toThrow(/without a type/);
    expect(() => outputFromUpdatedMcpOutput([{ type: 'text' }])).toThrow(/text block without text/);
  });
});
