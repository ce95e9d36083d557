import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { builtinTools } from '../../src/tools/builtin.js';
import { createHarness, scratchDir } from '../support/harness.js';
import type { Harness } from '../support/harness.js';
import { planMarkerResults } from '../support/history-text.js';

interface PlanMarkerResult {
  firstGroup?: { plans: unknown[] };
  ranFirstGroup?: Record<string, { modelContent?: string }>;
}

const CALLS = 10;
/**
 * Bytes per call that a ten-Read turn's Plan marker may record besides the files' text: the prepared plans, Plan's
 * list of the calls and the outcomes' other fields. Measured at about 415 once a plan leaves out what the workflow can
 * put back (about 1,010 when every plan carried every field).
 */
const MAX_BYTES_PER_CALL = 500;

/**
 * The history a turn of allowed reads records: Plan runs the reads itself, so its marker holds each call's prepared
 * plan and outcome. The plan records only what the workflow cannot put back by itself.
 */
describe("a ten-Read turn's Plan marker (real server, real Read)", () => {
  let harness: Harness;
  let cwd: string;
  beforeAll(async () => {
    cwd = await scratchDir();
    await writeFile(path.join(cwd, 'file.txt'), `${'x'.repeat(79)}\n`.repeat(25));
    harness = await createHarness({ tools: builtinTools(), defaultCwd: cwd });
  });
  afterAll(async () => harness.close());

  it(`records at most ${MAX_BYTES_PER_CALL} bytes per call besides the files' text, and the reads still answer`, async () => {
    const input = { file_path: 'file.txt' };
    const calls = Array.from({ length: CALLS }, (_, index) => ({ id: `r${index}`, name: 'Read', input }));
    const { results, events } = await harness.withWorker(async () => {
      const session = await harness.startSession({ cwd });
      const turn = await session.executeTurn({ turnId: 't', calls });
      return { results: turn.results, events: (await session.workflow.fetchHistory()).events ?? [] };
    });
    expect(results.map((result) => result.status)).toEqual(calls.map(() => 'success'));
    for (const result of results) expect(result.modelContent).toContain(`\t${'x'.repeat(79)}`);
    const [recorded, ...others] = planMarkerResults(events);
    expect(others).toEqual([]);
    if (recorded === undefined) throw new Error('no Plan marker');
    const planned = JSON.parse(recorded) as PlanMarkerResult;
    // Plan prepared and ran every call: the case whose marker holds a plan and an outcome per call.
    expect(planned.firstGroup?.plans).toHaveLength(CALLS);
    expect(Object.keys(planned.ranFirstGroup ?? {}).sort()).toEqual(calls.map((call) => call.id).sort());
    const fileText = Object.values(planned.ranFirstGroup ?? {}).reduce(
      (sum, outcome) => sum + Buffer.byteLength(JSON.stringify(outcome.modelContent ?? '')),
      0,
    );
    const perCall = (Buffer.byteLength(recorded) - fileText) / CALLS;
    expect(perCall).toBeLessThanOrEqual(MAX_BYTES_PER_CALL);
  });
});
