/**
 * Prepare's answer without repeats: a call's input crosses an activity boundary at most once. A ready plan travels with
 * its input left out when it is the call's own input (the workflow has that already), and with every long string that
 * is a slice of one of the input's text fields (a Bash command's rule content, its simple commands, the rule an
 * `allow_always` remembers…) replaced by a reference to that slice. The workflow puts both back before it uses the
 * plan, so nothing downstream sees the difference. Pure and deterministic: safe in workflow code.
 */
import type { CallPlan, ReadyCallPlan, RejectedCallPlan } from './call-plan.js';
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

/** A ready plan as Prepare sends it: see the module comment. */
export type CompactReadyPlan = Omit<ReadyCallPlan, 'input'> & {
  /** Absent when `inputFromCall`. */
  input?: unknown;
  /** The resolved input is the call's own input (the same canonical JSON, so the same digest). */
  inputFromCall?: true;
  refs?: PlanStringRef[];
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
export function compactPlan(plan: CallPlan, options: { sameAsCall: boolean }): WireCallPlan {
  if (plan.kind === 'rejected') return plan;
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
  const compact: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(plan))
    compact[key] = OWN_KEYS.has(key) || sources.length === 0 ? value : visit(value, [key]);
  if (options.sameAsCall) {
    delete compact.input;
    compact.inputFromCall = true;
  }
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
  const plan = { ...rest, input: inputFromCall === true ? callInputValue(call) : rest.input } as ReadyCallPlan;
  if (refs === undefined || refs.length === 0) return plan;
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
  return plan;
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
