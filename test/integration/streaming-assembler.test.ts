import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { anthropicToolStream } from '../../src/client/model-formats/anthropic-stream.js';
import type { AnthropicStreamEvent } from '../../src/client/model-formats/anthropic-stream.js';
import { openAIResponsesToolStream } from '../../src/client/model-formats/openai-responses-stream.js';
import { toOpenAIResponsesOutputs } from '../../src/client/model-formats/openai-responses.js';
import type { SessionHandle } from '../../src/client/switchyard-client.js';
import { builtinTools } from '../../src/tools/builtin.js';
import { conditionTools } from '../support/condition-tools.js';
import { createHarness, scratchDir, uniqueName } from '../support/harness.js';
import type { Harness } from '../support/harness.js';
import { waitFor } from '../support/wait-for.js';

const ms = (iso: string | undefined): number => Date.parse(iso ?? 'NaN');

async function startedCalls(session: SessionHandle, turnId: string): Promise<string[]> {
  const { events } = await session.events();
  return events.flatMap((event) => (event.type === 'ToolCallStarted' && event.turnId === turnId ? [event.callId] : []));
}

/** One Anthropic `tool_use` block, its input JSON streamed in `pieces` (as `input_json_delta` fragments). */
function toolUseBlock(index: number, id: string, name: string, pieces: string[]): AnthropicStreamEvent[] {
  return [
    { type: 'content_block_start', index, content_block: { type: 'tool_use', id, name, input: {} } },
    ...pieces.map((partial_json) => ({
      type: 'content_block_delta',
      index,
      delta: { type: 'input_json_delta', partial_json },
    })),
    { type: 'content_block_stop', index },
  ];
}

/** A JSON text cut into small fragments, as a model streams it. */
const fragments = (value: unknown): string[] => JSON.stringify(value).match(/.{1,6}/g) ?? [];

describe('streaming assemblers on a real server', () => {
  let harness: Harness;
  let cwd: string;
  beforeAll(async () => {
    cwd = await scratchDir();
    harness = await createHarness({ tools: [...builtinTools(), ...conditionTools()], defaultCwd: cwd });
  });
  afterAll(async () => harness.close());

  it('starts the first of three streamed Anthropic tool calls before the third call has finished streaming its arguments', async () => {
    const releases = ['one', 'two', 'three'].map((label) => path.join(cwd, `${uniqueName(label)}.release`));
    const input = (index: number) => ({ release_file: releases[index], label: `call ${index + 1}` });
    const outcome = await harness.withWorker(async () => {
      const session = await harness.startSession({ cwd });
      const tools = anthropicToolStream({ turn: session.streamTurn('a1') });
      const third = toolUseBlock(3, 'toolu_03', 'WaitForFile', fragments(input(2)));
      const events: AnthropicStreamEvent[] = [
        { type: 'message_start' },
        { type: 'content_block_start', index: 0, content_block: { type: 'text' } },
        { type: 'content_block_stop', index: 0 },
        ...toolUseBlock(1, 'toolu_01', 'WaitForFile', fragments(input(0))),
        ...toolUseBlock(2, 'toolu_02', 'WaitForFile', fragments(input(1))),
        ...third.slice(0, 3), // the third call's block has started and streamed two fragments of its arguments
      ];
      for (const event of events) await tools.push(event);
      // The model is still streaming the third call's arguments: the first call runs already.
      await waitFor(
        () => startedCalls(session, 'a1'),
        (ids) => ids.includes('toolu_01'),
        { what: 'the first call to start' },
      );
      const whileThirdStreams = {
        started: await startedCalls(session, 'a1'),
        handedOn: tools.calls.map((call) => call.id),
      };
      for (const event of third.slice(3)) await tools.push(event);
      await tools.push({ type: 'message_delta', delta: { stop_reason: 'tool_use' } });
      await tools.push({ type: 'message_stop' });
      await Promise.all(releases.map((file) => writeFile(file, '')));
      return { whileThirdStreams, results: await tools.results() };
    });
    expect(outcome.whileThirdStreams.started).toContain('toolu_01');
    expect(outcome.whileThirdStreams.handedOn).toEqual(['toolu_01', 'toolu_02']);
    expect(outcome.results.map((result) => [result.callId, result.status, result.modelContent])).toEqual([
      ['toolu_01', 'success', 'call 1'],
      ['toolu_02', 'success', 'call 2'],
      ['toolu_03', 'success', 'call 3'],
    ]);
    const [first, , last] = outcome.results.map((result) => result.timeline);
    expect(ms(first?.startedAt)).toBeLessThan(ms(last?.addedAt));
  });

  it('runs what completed and answers a call cut off at max_tokens with an error, ending the turn', async () => {
    await writeFile(path.join(cwd, 'notes.txt'), 'alpha\nbeta\n');
    const results = await harness.withWorker(async () => {
      const session = await harness.startSession({ cwd });
      const tools = anthropicToolStream({ turn: session.streamTurn('a2') });
      for (const event of [
        ...toolUseBlock(0, 'toolu_read', 'Read', fragments({ file_path: 'notes.txt' })),
        ...toolUseBlock(1, 'toolu_cut', 'Write', ['{"file_path": "out.txt", "content": "a very long te']),
        { type: 'message_delta', delta: { stop_reason: 'max_tokens' } },
        { type: 'message_stop' },
      ]) {
        await tools.push(event);
      }
      return tools.results();
    });
    expect(results.map((result) => [result.callId, result.status])).toEqual([
      ['toolu_read', 'success'],
      ['toolu_cut', 'error'],
    ]);
    expect(results[0]?.modelContent).toContain('alpha');
    expect(results[1]?.modelContent).toContain(
      'The Write call was cut off before its input was complete (the model stopped: max_tokens)',
    );
  });

  it('runs a strict-mode Responses call whose optional fields stream as null with the real Read tool', async () => {
    await writeFile(path.join(cwd, 'strict.txt'), 'one\ntwo\nthree\n');
    const results = await harness.withWorker(async () => {
      const session = await harness.startSession({ cwd });
      const tools = openAIResponsesToolStream({ turn: session.streamTurn('r1') });
      const args = '{"file_path":"strict.txt","offset":null,"limit":null}';
      for (const event of [
        {
          type: 'response.output_item.added',
          output_index: 0,
          item: { type: 'function_call', id: 'fc_1', call_id: 'call_1', name: 'Read', arguments: '' },
        },
        ...(args.match(/.{1,8}/g) ?? []).map((delta) => ({
          type: 'response.function_call_arguments.delta',
          output_index: 0,
          item_id: 'fc_1',
          delta,
        })),
        { type: 'response.function_call_arguments.done', output_index: 0, item_id: 'fc_1', arguments: args },
        { type: 'response.completed', response: { status: 'completed' } },
      ]) {
        await tools.push(event);
      }
      return tools.results();
    });
    expect(results[0]).toMatchObject({ callId: 'call_1', status: 'success' });
    expect(toOpenAIResponsesOutputs(results)[0]?.output).toContain('three');
  });
});
