import { describe, expect, it } from 'vitest';
import type { ReadyCallPlan } from '../../src/contracts/call-plan.js';
import {
  compactOutcomes,
  compactPlan,
  compactPlannedCalls,
  expandOutcomes,
  expandPlan,
  expandPlannedCalls,
} from '../../src/contracts/compact-plan.js';
import type { CallOutcome, PlannedCall } from '../../src/contracts/pipeline.js';

const file = '/tmp/switchyard-compact-plan/file.txt';

/** A ready Read plan as Prepare makes it: every default field present. */
const readPlan: ReadyCallPlan = {
  kind: 'ready',
  callId: 'r0',
  toolName: 'Read',
  input: { file_path: file },
  inputDigest: '2fe463be2013442ae7d54ba1fe27d677a9d0553e0257af99d273fe6e2d57167a',
  flags: {
    concurrentSafe: true,
    readOnly: true,
    destructive: false,
    sideEffectScope: 'none',
    idempotent: true,
    declaredReadOnly: true,
  },
  summary: `Read: ${file}`,
  interruptBehavior: 'cancel',
  alwaysAsk: false,
  stopTurnOnSuccess: false,
  cancelSiblingsOnError: false,
  ruleKind: 'path',
  rememberRule: `Read(${file})`,
  editsInsideCwd: false,
  hasPermissionRequestHooks: false,
  readsSessionState: false,
  ruleContent: file,
  permission: {},
  timeoutMs: 30_000,
};

/** A plan whose every field differs from its default or from what could be derived. */
const unusualPlan: ReadyCallPlan = {
  kind: 'ready',
  callId: 'b1',
  toolName: 'Bash',
  input: { command: 'npm test', timeout: 5 },
  inputDigest: 'aa'.repeat(32),
  flags: {
    concurrentSafe: false,
    readOnly: false,
    destructive: true,
    sideEffectScope: 'workspace',
    idempotent: false,
    declaredReadOnly: false,
  },
  summary: 'Bash: run the tests',
  interruptBehavior: 'block',
  alwaysAsk: true,
  stopTurnOnSuccess: true,
  cancelSiblingsOnError: true,
  ruleKind: 'command',
  rememberRule: 'Bash(npm test:*)',
  editsInsideCwd: true,
  hasPermissionRequestHooks: true,
  readsSessionState: true,
  ruleContent: 'npm test',
  approval: { preview: 'npm test', narrowToAllow: true },
  hook: { decision: 'ask', reason: 'why not' },
  permission: { commands: { parsed: true, parts: [{ content: 'npm test', readOnly: false }], otherSpellings: [] } },
  clientTool: true,
  postToolUseHooks: true,
};

/** A plan with text rules and no rule content: nothing to derive its summary or remembered rule from. */
const textPlan: ReadyCallPlan = {
  ...readPlan,
  callId: 't2',
  toolName: 'TodoWrite',
  input: { todos: [] },
  flags: { ...readPlan.flags, sideEffectScope: 'session', concurrentSafe: false, readOnly: false },
  summary: 'TodoWrite',
  ruleKind: 'text',
  rememberRule: 'TodoWrite',
  ruleContent: undefined,
  permission: undefined,
  timeoutMs: undefined,
};
delete textPlan.ruleContent;
delete textPlan.permission;
delete textPlan.timeoutMs;

/** Through JSON, as the plan crosses the activity boundary and lands in history. */
const viaJson = <T>(value: T): T => JSON.parse(JSON.stringify(value)) as T;

describe('compact plans: what a Prepare answer records per call', () => {
  for (const plan of [readPlan, unusualPlan, textPlan])
    it(`${plan.toolName}: the workflow gets back every field, defaults included`, () => {
      for (const sameAsCall of [true, false])
        for (const leaveOutDefaults of [true, false]) {
          const call = { input: plan.input };
          const wire = viaJson(compactPlan(plan, { sameAsCall, leaveOutDefaults }));
          expect(expandPlan(wire, call)).toStrictEqual(plan);
        }
    });

  it('a Read plan leaves out its defaults and what it can re-derive: under 300 bytes, not the full 750', () => {
    const wire = compactPlan(readPlan, { sameAsCall: false, leaveOutDefaults: true }) as unknown as Record<
      string,
      unknown
    >;
    for (const key of [
      'summary',
      'rememberRule',
      'interruptBehavior',
      'alwaysAsk',
      'stopTurnOnSuccess',
      'cancelSiblingsOnError',
      'editsInsideCwd',
      'hasPermissionRequestHooks',
      'readsSessionState',
    ])
      expect(wire, key).not.toHaveProperty(key);
    expect(JSON.stringify(readPlan).length).toBeGreaterThan(700);
    expect(JSON.stringify(wire).length).toBeLessThan(300);
  });

  it('leaves nothing out unless the workflow asked (`compactPlans`): older session code reads every field', () => {
    // A rolling deploy: a newer worker's regular Prepare answers a session whose workflow code predates the compact
    // shape. That code reads `flags.readOnly`, `ruleContent`, `summary` as they are; left out, a rule would not match.
    const wire = viaJson(compactPlan(readPlan, { sameAsCall: false })) as unknown as Record<string, unknown>;
    expect(wire.flags).toStrictEqual(readPlan.flags);
    for (const key of ['summary', 'rememberRule', 'ruleContent', 'interruptBehavior', 'ruleKind', 'alwaysAsk'])
      expect(wire[key], key).toStrictEqual(readPlan[key as keyof ReadyCallPlan]);
  });

  it('a plan recorded in the full shape (older histories) expands to itself', () => {
    for (const plan of [readPlan, unusualPlan, textPlan])
      expect(expandPlan(viaJson(plan), { input: plan.input })).toStrictEqual(plan);
    // The shape before defaults were left out: input from the call, every field present.
    const { input: _input, ...rest } = readPlan;
    expect(expandPlan(viaJson({ ...rest, inputFromCall: true as const }), { input: readPlan.input })).toStrictEqual(
      readPlan,
    );
  });

  it("Plan's own list (kind, tool, concurrency of each call) round-trips, rejected calls included, old shape too", () => {
    const calls = [
      { id: 'r0', name: 'Read', input: {} },
      { id: 'x1', name: 'read', input: {} },
      { id: 'x2', name: 'Nope', input: {} },
      { id: 'b3', name: 'Bash', input: {} },
    ];
    const planned: PlannedCall[] = [
      { kind: 'planned', callId: 'r0', toolName: 'Read', concurrentSafe: true },
      { kind: 'planned', callId: 'x1', toolName: 'Read', concurrentSafe: true },
      {
        kind: 'rejected',
        callId: 'x2',
        toolName: 'Nope',
        status: 'error',
        modelContent: 'no such tool',
        errorCode: 'unknown_tool',
        stage: 'lookup',
      },
      { kind: 'planned', callId: 'b3', toolName: 'Bash', concurrentSafe: false },
    ];
    const wire = viaJson(compactPlannedCalls(planned, calls));
    expect(expandPlannedCalls(wire, calls)).toStrictEqual(planned);
    expect(JSON.stringify(wire.slice(0, 1)).length).toBeLessThan(JSON.stringify(planned.slice(0, 1)).length / 2);
    expect(expandPlannedCalls(viaJson(planned), calls)).toStrictEqual(planned);
  });

  it('the outcomes of the calls Plan ran round-trip, defaults left out; outcomes recorded whole stay as they were', () => {
    const outcomes: Record<string, CallOutcome> = {
      r0: { status: 'success', modelContent: 'text', isError: false, activeMs: 4, queuedMs: 0, attempt: 1 },
      r1: { status: 'error', modelContent: 'no', isError: true, errorCode: 'x', activeMs: 1, queuedMs: 7 },
    };
    const wire = viaJson(compactOutcomes(outcomes));
    expect(wire.r0).not.toHaveProperty('isError');
    expect(wire.r0).not.toHaveProperty('queuedMs');
    expect(expandOutcomes(wire)).toStrictEqual(outcomes);
    expect(expandOutcomes(viaJson(outcomes))).toStrictEqual(outcomes);
  });
});

describe('compact plans on the wire', () => {
  // The bytes a Prepare answer records, field by field in the order Prepare makes them: the compact shape is built
  // without deleting fields, and must send the same JSON as when it was built by deleting them.
  const long = 'cd /tmp/switchyard-bench/project && npm run build -- --verbose && npm test -- --reporter=dot --bail';
  /** A Bash plan whose long strings are slices of its command: they travel as references. */
  const bashPlan: ReadyCallPlan = {
    ...unusualPlan,
    input: { command: long, timeout: 5 },
    flags: { ...unusualPlan.flags, destructive: false },
    summary: `Bash: ${long}`,
    alwaysAsk: false,
    stopTurnOnSuccess: false,
    ruleContent: long,
    approval: { preview: long },
    permission: {
      commands: {
        parsed: true,
        parts: [
          { content: 'cd /tmp/switchyard-bench/project', readOnly: true },
          { content: 'npm run build -- --verbose && npm test -- --reporter=dot --bail --xx', readOnly: false },
        ],
        otherSpellings: [],
      },
    },
  };
  const plans = [readPlan, bashPlan];
  const expected = [
    '{"kind":"ready","callId":"r0","toolName":"Read","inputDigest":"2fe463be2013442ae7d54ba1fe27d677a9d0553e0257af99d273fe6e2d57167a","flags":"crio","ruleKind":"path","permission":{},"timeoutMs":30000,"ruleContentField":"file_path","inputFromCall":true}',
    '{"kind":"ready","callId":"r0","toolName":"Read","inputDigest":"2fe463be2013442ae7d54ba1fe27d677a9d0553e0257af99d273fe6e2d57167a","flags":{"concurrentSafe":true,"readOnly":true,"destructive":false,"sideEffectScope":"none","idempotent":true,"declaredReadOnly":true},"summary":"Read: /tmp/switchyard-compact-plan/file.txt","interruptBehavior":"cancel","alwaysAsk":false,"stopTurnOnSuccess":false,"cancelSiblingsOnError":false,"ruleKind":"path","rememberRule":"Read(/tmp/switchyard-compact-plan/file.txt)","editsInsideCwd":false,"hasPermissionRequestHooks":false,"readsSessionState":false,"ruleContent":"/tmp/switchyard-compact-plan/file.txt","permission":{},"timeoutMs":30000,"inputFromCall":true}',
    '{"kind":"ready","callId":"r0","toolName":"Read","input":{"file_path":"/tmp/switchyard-compact-plan/file.txt"},"inputDigest":"2fe463be2013442ae7d54ba1fe27d677a9d0553e0257af99d273fe6e2d57167a","flags":"crio","ruleKind":"path","permission":{},"timeoutMs":30000,"ruleContentField":"file_path"}',
    '{"kind":"ready","callId":"r0","toolName":"Read","input":{"file_path":"/tmp/switchyard-compact-plan/file.txt"},"inputDigest":"2fe463be2013442ae7d54ba1fe27d677a9d0553e0257af99d273fe6e2d57167a","flags":{"concurrentSafe":true,"readOnly":true,"destructive":false,"sideEffectScope":"none","idempotent":true,"declaredReadOnly":true},"summary":"Read: /tmp/switchyard-compact-plan/file.txt","interruptBehavior":"cancel","alwaysAsk":false,"stopTurnOnSuccess":false,"cancelSiblingsOnError":false,"ruleKind":"path","rememberRule":"Read(/tmp/switchyard-compact-plan/file.txt)","editsInsideCwd":false,"hasPermissionRequestHooks":false,"readsSessionState":false,"ruleContent":"/tmp/switchyard-compact-plan/file.txt","permission":{},"timeoutMs":30000}',
    '{"kind":"ready","callId":"b1","toolName":"Bash","inputDigest":"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa","flags":":workspace","interruptBehavior":"block","cancelSiblingsOnError":true,"ruleKind":"command","rememberRule":"Bash(npm test:*)","editsInsideCwd":true,"hasPermissionRequestHooks":true,"readsSessionState":true,"approval":{"preview":""},"hook":{"decision":"ask","reason":"why not"},"permission":{"commands":{"parsed":true,"parts":[{"content":"cd /tmp/switchyard-bench/project","readOnly":true},{"content":"npm run build -- --verbose && npm test -- --reporter=dot --bail --xx","readOnly":false}],"otherSpellings":[]}},"clientTool":true,"postToolUseHooks":true,"ruleContentField":"command","inputFromCall":true,"refs":[{"path":["approval","preview"],"field":"command","start":0,"end":99}]}',
    '{"kind":"ready","callId":"b1","toolName":"Bash","inputDigest":"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa","flags":{"concurrentSafe":false,"readOnly":false,"destructive":false,"sideEffectScope":"workspace","idempotent":false,"declaredReadOnly":false},"summary":"","interruptBehavior":"block","alwaysAsk":false,"stopTurnOnSuccess":false,"cancelSiblingsOnError":true,"ruleKind":"command","rememberRule":"Bash(npm test:*)","editsInsideCwd":true,"hasPermissionRequestHooks":true,"readsSessionState":true,"ruleContent":"","approval":{"preview":""},"hook":{"decision":"ask","reason":"why not"},"permission":{"commands":{"parsed":true,"parts":[{"content":"cd /tmp/switchyard-bench/project","readOnly":true},{"content":"npm run build -- --verbose && npm test -- --reporter=dot --bail --xx","readOnly":false}],"otherSpellings":[]}},"clientTool":true,"postToolUseHooks":true,"inputFromCall":true,"refs":[{"path":["summary"],"field":"command","start":0,"end":99,"before":"Bash: "},{"path":["ruleContent"],"field":"command","start":0,"end":99},{"path":["approval","preview"],"field":"command","start":0,"end":99}]}',
    '{"kind":"ready","callId":"b1","toolName":"Bash","input":{"command":"cd /tmp/switchyard-bench/project && npm run build -- --verbose && npm test -- --reporter=dot --bail","timeout":5},"inputDigest":"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa","flags":":workspace","interruptBehavior":"block","cancelSiblingsOnError":true,"ruleKind":"command","rememberRule":"Bash(npm test:*)","editsInsideCwd":true,"hasPermissionRequestHooks":true,"readsSessionState":true,"approval":{"preview":""},"hook":{"decision":"ask","reason":"why not"},"permission":{"commands":{"parsed":true,"parts":[{"content":"cd /tmp/switchyard-bench/project","readOnly":true},{"content":"npm run build -- --verbose && npm test -- --reporter=dot --bail --xx","readOnly":false}],"otherSpellings":[]}},"clientTool":true,"postToolUseHooks":true,"ruleContentField":"command","refs":[{"path":["approval","preview"],"field":"command","start":0,"end":99}]}',
    '{"kind":"ready","callId":"b1","toolName":"Bash","input":{"command":"cd /tmp/switchyard-bench/project && npm run build -- --verbose && npm test -- --reporter=dot --bail","timeout":5},"inputDigest":"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa","flags":{"concurrentSafe":false,"readOnly":false,"destructive":false,"sideEffectScope":"workspace","idempotent":false,"declaredReadOnly":false},"summary":"","interruptBehavior":"block","alwaysAsk":false,"stopTurnOnSuccess":false,"cancelSiblingsOnError":true,"ruleKind":"command","rememberRule":"Bash(npm test:*)","editsInsideCwd":true,"hasPermissionRequestHooks":true,"readsSessionState":true,"ruleContent":"","approval":{"preview":""},"hook":{"decision":"ask","reason":"why not"},"permission":{"commands":{"parsed":true,"parts":[{"content":"cd /tmp/switchyard-bench/project","readOnly":true},{"content":"npm run build -- --verbose && npm test -- --reporter=dot --bail --xx","readOnly":false}],"otherSpellings":[]}},"clientTool":true,"postToolUseHooks":true,"refs":[{"path":["summary"],"field":"command","start":0,"end":99,"before":"Bash: "},{"path":["ruleContent"],"field":"command","start":0,"end":99},{"path":["approval","preview"],"field":"command","start":0,"end":99}]}',
  ];
  it('sends each plan as the same JSON, with and without its defaults, with and without its input', () => {
    const sent: string[] = [];
    for (const plan of plans)
      for (const sameAsCall of [true, false])
        for (const leaveOutDefaults of [true, false])
          sent.push(JSON.stringify(compactPlan(plan, { sameAsCall, leaveOutDefaults })));
    expect(sent).toEqual(expected);
  });
  it('sends outcomes without their defaults, the rest in their order', () => {
    const outcomes: Record<string, CallOutcome> = {
      r0: { status: 'success', modelContent: 'x', isError: false, queuedMs: 0, activeMs: 3 },
      r1: { status: 'error', modelContent: 'y', isError: true, queuedMs: 5, activeMs: 3 },
    };
    expect(JSON.stringify(compactOutcomes(outcomes))).toBe(
      '{"r0":{"status":"success","modelContent":"x","activeMs":3},"r1":{"status":"error","modelContent":"y","isError":true,"queuedMs":5,"activeMs":3}}',
    );
  });
});
