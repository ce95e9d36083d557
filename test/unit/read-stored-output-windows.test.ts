import { describe, expect, it } from 'vitest';
import { FileArtifactStore } from '../../src/artifacts/file-artifact-store.js';
import { readTool } from '../../src/tools/builtin/read.js';
import type { ToolOutput } from '../../src/tools/define-tool.js';
import { scratchDir } from '../support/scratch.js';
import { toolContext } from '../support/tool-context.js';

function modelText(output: ToolOutput): string {
  return typeof output === 'string' ? output : output.content;
}

/** The model's way through stored output paged by characters: each answer's first line says where to continue. */
async function readWhole(
  reference: string,
  context: ReturnType<typeof toolContext>,
  limit?: number,
): Promise<{ text: string; reads: number }> {
  let text = '';
  let offset: number | undefined;
  for (let reads = 1; reads < 1_000; reads += 1) {
    const answer = modelText(
      await readTool.execute(
        {
          file_path: reference,
          ...(offset === undefined ? {} : { offset }),
          ...(limit === undefined ? {} : { limit }),
        },
        context,
      ),
    );
    const newline = answer.indexOf('\n');
    const note = answer.slice(0, newline);
    expect(note).toMatch(/^\[Characters \d+-\d+ of \d+ of switchyard-artifact:/);
    text += answer.slice(newline + 1);
    const next = /Continue with offset (\d+)\.\]$/.exec(note);
    if (next === null) {
      expect(note).toContain('This is the end of the output.');
      return { text, reads };
    }
    offset = Number(next[1]);
  }
  throw new Error('never reached the end');
}

describe('Read of stored output without line structure', () => {
  it('pages a 300 KB one-line JSON by characters, nothing cut, and the pieces concatenate to the output', async () => {
    const store = new FileArtifactStore(await scratchDir());
    const json = JSON.stringify({
      items: Array.from({ length: 6_000 }, (_, index) => ({ index, name: `item-${index}` })),
    });
    expect(json.length).toBeGreaterThan(150_000);
    const content = json + json.slice(0, 300_000 - json.length);
    const stored = await store.put({ sessionId: 's', callId: 'one-line', content });
    const context = toolContext({ cwd: await scratchDir(), artifacts: store });
    const whole = await readWhole(stored.uri, context);
    expect(whole.text).toBe(content);
    expect(whole.reads).toBe(3);
    expect((await readWhole(stored.uri, context, 7_777)).text).toBe(content);
  });

  it('keeps multi-byte characters and surrogate pairs whole across windows', async () => {
    const store = new FileArtifactStore(await scratchDir());
    const content = 'é😀中'.repeat(40_000) + '\n' + 'tail';
    const stored = await store.put({ sessionId: 's', callId: 'wide', content });
    const context = toolContext({ cwd: await scratchDir(), artifacts: store });
    expect((await readWhole(stored.uri, context)).text).toBe(content);
    expect((await readWhole(stored.uri, context, 1_001)).text).toBe(content);
  });

  it('keeps lines for stored output whose lines fit the cut, and refuses an offset past the end', async () => {
    const store = new FileArtifactStore(await scratchDir());
    const lines = await store.put({ sessionId: 's', callId: 'lines', content: 'one\ntwo\n' });
    const context = toolContext({ cwd: await scratchDir(), artifacts: store });
    expect(modelText(await readTool.execute({ file_path: lines.uri }, context))).toBe('     1\tone\n     2\ttwo');
    const long = await store.put({ sessionId: 's', callId: 'long', content: 'x'.repeat(5_000) });
    await expect(readTool.execute({ file_path: long.uri, offset: 5_001 }, context)).rejects.toThrow(
      'offset 5001 is past the end of the output (5000 characters)',
    );
  });
});
