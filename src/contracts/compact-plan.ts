/**
 * Prepare's answer without repeats: a call's input crosses an activity boundary at most once. A ready plan travels with
 * its input left out when it is the call's own input (the workflow has that already), and with every long string that
 * is a slice of one of the input's text fields (a Bash command's rule content, its simple commands, the rule an
 * `allow_always` remembers…) replaced by a reference to that slice. The workflow puts both back before it uses the
 * plan, so nothing downstream sees the difference. Pure and deterministic: safe in workflow code.
 *
 * A ready plan also leaves out what the workflow can put back by itself (`leaveOutDefaults`): fields at their
 * defaults (`false`, `interruptBehavior: 'cancel'`, `ruleKind: 'text'`), a summary and a remembered rule that are the
 * tool's name with the rule content, a rule content that is one of the input's fields; its flags travel as a few
 * letters. Plans recorded before carry every field, and expand to themselves.
 */
import type { CallFlags, CallPlan, ReadyCallPlan, RejectedCallPlan, SideEffectScope } from './call-plan.js';
import type { CallOutcome, PlannedCall } from './call-outcome.js';
import type { ToolCall } from './tool-call.js';

/**
 * A string of the plan that is `before + input[field].slice(start, end) + after`, found at `path` inside the plan (a
 * slice of a field, or a whole field wrapped, such as `Bash(<command>)`).
 */
export interface PlanStringRef {
  path: Array<string | number>;
  field: string;
  start: number;
  end: number;
  before?: string;
  after?: string;
}

/** Fields of a ready plan left out when they hold these values. */
const DEFAULTS = {
  interruptBehavior: 'cancel',
  ruleKind: 'text',
  alwaysAsk: false,
  stopTurnOnSuccess: false,
  cancelSiblingsOnError: false,
  editsInsideCwd: false,
  hasPermissionRequestHooks: false,
  readsSessionState: false,
} as const satisfies Partial<ReadyCallPlan>;

type DefaultedKey = keyof typeof DEFAULTS;

/** A ready plan as Prepare sends it: see the module comment. */
export type CompactReadyPlan = Omit<ReadyCallPlan, 'input' | 'flags' | 'summary' | 'rememberRule' | DefaultedKey> &
  Partial<Pick<ReadyCallPlan, 'summary' | 'rememberRule' | DefaultedKey>> & {
    /** Absent when `inputFromCall`. */
    input?: unknown;
    /** The resolved input is the call's own input (the same canonical JSON, so the same digest). */
    inputFromCall?: true;
    refs?: PlanStringRef[];
    /** The flags as recorded before (an object), or as letters (`flagLetters`). */
    flags: CallFlags | string;
    /** The rule content is this field of the (resolved) input. */
    ruleContentField?: string;
  };

export type WireCallPlan = CompactReadyPlan | RejectedCallPlan;

/** Strings shorter than this travel as they are: a reference would not save much. */
const MIN_REF_CHARS = 64;

/** The call's input as the pipeline starts from it: a JSON string parsed, an absent input as `{}`. */
export function callInputValue(call: Pick<ToolCall, 'input'>): unknown {
  if (typeof call.input !== 'string') return call.input ?? {};
  try {
    return JSON.parse(call.input) as unknown;
  } catch {
    return undefined;
  }
}

function textFields(input: unknown): Array<[string, string]> {
  if (input === null || typeof input !== 'object' || Array.isArray(input)) return [];
  return Object.entries(input as Record<string, unknown>).filter(
    (entry): entry is [string, string] => typeof entry[1] === 'string' && entry[1].length >= MIN_REF_CHARS,
  );
}

/** Keys of a ready plan that never hold a slice of the input. */
const OWN_KEYS = new Set(['kind', 'callId', 'toolName', 'input', 'inputDigest', 'flags', 'ruleKind']);

/**
 * The plan as Prepare sends it. `sameAsCall`: the resolved input has the digest of the call's own input (the caller
 * checks with its digest function, which the workflow cannot import).
 */
export function compactPlan(
  full: CallPlan,
  options: { sameAsCall: boolean; leaveOutDefaults?: boolean },
): WireCallPlan {
  if (full.kind === 'rejected') return full;
  // Without `leaveOutDefaults` (a workflow that did not ask for `compactPlans`), every field travels as before.
  const plan: CompactReadyPlan = options.leaveOutDefaults === true ? leaveOutDefaults(full) : full;
  const sources = textFields(plan.input);
  const refs: PlanStringRef[] = [];
  const visit = (value: unknown, path: Array<string | number>): unknown => {
    if (typeof value === 'string') {
      if (value.length < MIN_REF_CHARS) return value;
      let best: PlanStringRef | undefined;
      for (const [field, text] of sources) {
        const region = sharedRegion(value, text);
        if (region === undefined || (best !== undefined && region.end - region.start <= best.end - best.start))
          continue;
        const ref: PlanStringRef = { path, field, start: region.start, end: region.end };
        if (region.from > 0) ref.before = value.slice(0, region.from);
        if (region.to < value.length) ref.after = value.slice(region.to);
        best = ref;
      }
      if (best !== undefined) {
        refs.push(best);
        return '';
      }
      return value;
    }
    if (Array.isArray(value)) return value.map((item, index) => visit(item, [...path, index]));
    if (value !== null && typeof value === 'object') {
      return Object.fromEntries(
        Object.entries(value as Record<string, unknown>).map(([key, item]) => [key, visit(item, [...path, key])]),
      );
    }
    return value;
  };
  // Built field by field, in the plan's order (no `delete`, which would leave V8 a slow dictionary of an object).
  const compact: Record<string, unknown> = {};
  for (const key of Object.keys(plan)) {
    if (key === 'input' && options.sameAsCall) continue;
    const value = (plan as Record<string, unknown>)[key];
    compact[key] = OWN_KEYS.has(key) || sources.length === 0 ? value : visit(value, [key]);
  }
  if (options.sameAsCall) compact.inputFromCall = true;
  if (refs.length > 0) compact.refs = refs;
  return compact as CompactReadyPlan;
}

/** Where a probe may start: the value's start and just after its first separators (`Bash(`, `/tmp/`, `a=`…). */
const SEPARATORS = new Set([' ', '/', '(', '=', ':', '\t', '\n', '"', "'"]);
const MAX_PROBES = 16;

/**
 * The longest stretch of `value` found in `text` from a few probes (`value[from, to)` equals `text[start, end)`), when
 * it is at least `MIN_REF_CHARS` long. Linear in both lengths per probe.
 */
function sharedRegion(
  value: string,
  text: string,
): { from: number; to: number; start: number; end: number } | undefined {
  const exact = text.indexOf(value);
  if (exact !== -1) return { from: 0, to: value.length, start: exact, end: exact + value.length };
  const probes = [0];
  for (let index = 0; index < value.length && probes.length < MAX_PROBES; index += 1)
    if (SEPARATORS.has(value[index] ?? '')) probes.push(index + 1);
  let best: { from: number; to: number; start: number; end: number } | undefined;
  for (const probe of probes) {
    if (probe + MIN_REF_CHARS > value.length) continue;
    const found = text.indexOf(value.slice(probe, probe + MIN_REF_CHARS));
    if (found === -1) continue;
    let from = probe;
    let start = found;
    while (from > 0 && start > 0 && value[from - 1] === text[start - 1]) {
      from -= 1;
      start -= 1;
    }
    let to = probe + MIN_REF_CHARS;
    let end = found + MIN_REF_CHARS;
    while (to < value.length && end < text.length && value[to] === text[end]) {
      to += 1;
      end += 1;
    }
    if (best === undefined || to - from > best.to - best.from) best = { from, to, start, end };
  }
  return best;
}

/** The plan the workflow uses, from what Prepare sent and the call it was for. */
export function expandPlan(wire: WireCallPlan, call: Pick<ToolCall, 'input'>): CallPlan {
  if (wire.kind === 'rejected') return wire;
  const { inputFromCall, refs, ...rest } = wire;
  const plan = { ...rest, input: inputFromCall === true ? callInputValue(call) : rest.input } as CompactReadyPlan;
  if (refs !== undefined && refs.length > 0) {
    const fields = plan.input as Record<string, unknown>;
    for (const ref of refs) {
      const source = fields[ref.field];
      if (typeof source !== 'string') continue;
      setAt(
        plan as unknown as Record<string, unknown>,
        ref.path,
        `${ref.before ?? ''}${source.slice(ref.start, ref.end)}${ref.after ?? ''}`,
      );
    }
  }
  return putBackDefaults(plan);
}

const FLAG_LETTERS: ReadonlyArray<[letter: string, flag: Exclude<keyof CallFlags, 'sideEffectScope'>]> = [
  ['c', 'concurrentSafe'],
  ['r', 'readOnly'],
  ['d', 'destructive'],
  ['i', 'idempotent'],
  ['o', 'declaredReadOnly'],
];

/** `crio`: the flags that are true, then `:<scope>` unless the side-effect scope is `none`. */
function flagLetters(flags: CallFlags): string {
  const letters = FLAG_LETTERS.filter(([, flag]) => flags[flag]).map(([letter]) => letter);
  return `${letters.join('')}${flags.sideEffectScope === 'none' ? '' : `:${flags.sideEffectScope}`}`;
}

/** Each flag's letter (`FLAG_LETTERS` the other way round). */
const LETTER_OF = Object.fromEntries(FLAG_LETTERS.map(([letter, flag]) => [flag, letter])) as Record<
  (typeof FLAG_LETTERS)[number][1],
  string
>;

function flagsFromLetters(code: string): CallFlags {
  // `letters[:scope]`: the scope is what follows the first colon, up to any next one.
  const colon = code.indexOf(':');
  const letters = colon === -1 ? code : code.slice(0, colon);
  const scope = colon === -1 ? 'none' : code.slice(colon + 1).split(':', 1)[0];
  return {
    concurrentSafe: letters.includes(LETTER_OF.concurrentSafe),
    readOnly: letters.includes(LETTER_OF.readOnly),
    destructive: letters.includes(LETTER_OF.destructive),
    sideEffectScope: scope as SideEffectScope,
    idempotent: letters.includes(LETTER_OF.idempotent),
    declaredReadOnly: letters.includes(LETTER_OF.declaredReadOnly),
  };
}

/** What the workflow can put back without being told (see the module comment). */
function leaveOutDefaults(plan: ReadyCallPlan): CompactReadyPlan {
  const { ruleContent, toolName, input } = plan;
  // The input's field that holds the rule content, if one does (the first, in the input's order).
  let ruleContentField: string | undefined;
  if (ruleContent !== undefined && input !== null && typeof input === 'object' && !Array.isArray(input)) {
    const fields = input as Record<string, unknown>;
    ruleContentField = Object.keys(fields).find((field) => fields[field] === ruleContent);
  }
  // Built field by field in the plan's order, leaving out instead of deleting (see `compactPlan`).
  const compact: Record<string, unknown> = {};
  for (const key of Object.keys(plan)) {
    const value = (plan as unknown as Record<string, unknown>)[key];
    if (key === 'flags') compact.flags = flagLetters(plan.flags);
    else if (Object.hasOwn(DEFAULTS, key) && DEFAULTS[key as DefaultedKey] === value) continue;
    else if (ruleContent !== undefined && key === 'summary' && value === `${toolName}: ${ruleContent}`) continue;
    else if (ruleContent !== undefined && key === 'rememberRule' && value === `${toolName}(${ruleContent})`) continue;
    else if (key === 'ruleContent' && ruleContentField !== undefined) continue;
    else compact[key] = value;
  }
  if (ruleContentField !== undefined) compact.ruleContentField = ruleContentField;
  return compact as CompactReadyPlan;
}

/**
 * The plan with what `leaveOutDefaults` left out put back, in the order Prepare makes a plan's fields; a plan recorded
 * with every field comes back as it was.
 */
function putBackDefaults(wire: CompactReadyPlan): ReadyCallPlan {
  if (typeof wire.flags !== 'string' && wire.ruleContentField === undefined && wire.summary !== undefined) {
    // Recorded before defaults were left out: as it was (the fields `DEFAULTS` names were always there).
    return wire as ReadyCallPlan;
  }
  const { ruleContentField, ...rest } = wire;
  const ruleContent =
    ruleContentField === undefined ? rest.ruleContent : (rest.input as Record<string, unknown>)[ruleContentField];
  const plan: Record<string, unknown> = {
    kind: rest.kind,
    callId: rest.callId,
    toolName: rest.toolName,
    input: rest.input,
    inputDigest: rest.inputDigest,
    flags: typeof rest.flags === 'string' ? flagsFromLetters(rest.flags) : rest.flags,
    summary: rest.summary ?? `${rest.toolName}: ${String(ruleContent)}`,
    interruptBehavior: rest.interruptBehavior ?? DEFAULTS.interruptBehavior,
    alwaysAsk: rest.alwaysAsk ?? DEFAULTS.alwaysAsk,
    stopTurnOnSuccess: rest.stopTurnOnSuccess ?? DEFAULTS.stopTurnOnSuccess,
    cancelSiblingsOnError: rest.cancelSiblingsOnError ?? DEFAULTS.cancelSiblingsOnError,
    ruleKind: rest.ruleKind ?? DEFAULTS.ruleKind,
    rememberRule: rest.rememberRule ?? `${rest.toolName}(${String(ruleContent)})`,
    editsInsideCwd: rest.editsInsideCwd ?? DEFAULTS.editsInsideCwd,
    hasPermissionRequestHooks: rest.hasPermissionRequestHooks ?? DEFAULTS.hasPermissionRequestHooks,
    readsSessionState: rest.readsSessionState ?? DEFAULTS.readsSessionState,
  };
  if (ruleContent !== undefined) plan.ruleContent = ruleContent;
  // The optional fields, as they came.
  for (const [key, value] of Object.entries(rest)) if (!(key in plan) && value !== undefined) plan[key] = value;
  return plan as unknown as ReadyCallPlan;
}

/**
 * A call of Plan's list as Plan sends it: a planned call without its kind, and without its tool name when it is the
 * call's own; `safe` for a concurrency-safe call. Rejected calls travel whole; lists recorded before hold full entries.
 */
export type WirePlannedCall = PlannedCall | { callId: string; toolName?: string; safe?: true };

/** Plan's list without repeats of the calls it is for (`calls`: the request's, in the same order). */
export function compactPlannedCalls(
  plans: readonly PlannedCall[],
  calls: ReadonlyArray<Pick<ToolCall, 'id' | 'name'>>,
): WirePlannedCall[] {
  return plans.map((plan, index) => {
    if (plan.kind !== 'planned') return plan;
    const call = calls[index];
    const wire: { callId: string; toolName?: string; safe?: true } = { callId: plan.callId };
    if (plan.toolName !== call?.name) wire.toolName = plan.toolName;
    if (plan.concurrentSafe) wire.safe = true;
    return wire;
  });
}

/** Plan's list as the workflow uses it, from what Plan sent and the calls it was for. */
export function expandPlannedCalls(
  wire: readonly WirePlannedCall[],
  calls: ReadonlyArray<Pick<ToolCall, 'id' | 'name'>>,
): PlannedCall[] {
  return wire.map((plan, index) => {
    if ('kind' in plan) return plan;
    return {
      kind: 'planned',
      callId: plan.callId,
      toolName: plan.toolName ?? calls[index]?.name ?? '',
      concurrentSafe: plan.safe === true,
    };
  });
}

/** Sets `value` at `path`, copying each container on the way so no shared object is changed. */
function setAt(root: Record<string, unknown>, path: ReadonlyArray<string | number>, value: string): void {
  let container: Record<string | number, unknown> = root;
  for (let depth = 0; depth < path.length - 1; depth += 1) {
    const key = path[depth] as string | number;
    const next = container[key];
    if (next === null || typeof next !== 'object') return;
    const copy = Array.isArray(next) ? [...(next as unknown[])] : { ...(next as Record<string, unknown>) };
    container[key] = copy;
    container = copy as Record<string | number, unknown>;
  }
  const last = path.at(-1);
  if (last !== undefined) container[last] = value;
}

/** An outcome of a call Plan ran, as Plan sends it: `isError: false` and `queuedMs: 0` left out. */
export type WireCallOutcome = Omit<CallOutcome, 'isError' | 'queuedMs'> &
  Partial<Pick<CallOutcome, 'isError' | 'queuedMs'>>;

/** The outcomes of the calls Plan ran, by call id, without the fields at their defaults. */
export function compactOutcomes(outcomes: Record<string, CallOutcome>): Record<string, WireCallOutcome> {
  return Object.fromEntries(
    Object.entries(outcomes).map(([callId, outcome]) => {
      const wire: Record<string, unknown> = {};
      for (const key of Object.keys(outcome)) {
        const value = (outcome as unknown as Record<string, unknown>)[key];
        if ((key === 'isError' && value === false) || (key === 'queuedMs' && value === 0)) continue;
        wire[key] = value;
      }
      return [callId, wire as WireCallOutcome];
    }),
  );
}

/** The outcomes as the workflow uses them (outcomes recorded whole come back as they were). */
export function expandOutcomes(outcomes: Record<string, WireCallOutcome>): Record<string, CallOutcome> {
  return Object.fromEntries(
    Object.entries(outcomes).map(([callId, wire]) => [
      callId,
      wire.isError !== undefined && wire.queuedMs !== undefined
        ? (wire as CallOutcome)
        : { ...wire, isError: wire.isError ?? false, queuedMs: wire.queuedMs ?? 0 },
    ]),
  );
}
