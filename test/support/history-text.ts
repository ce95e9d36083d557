import type { WorkflowHandle } from '@temporalio/client';

type History = Awaited<ReturnType<WorkflowHandle['fetchHistory']>>;

/**
 * A fetched workflow history as searchable text, with every payload's data decoded to UTF-8 (Switchyard's
 * payloads are JSON). `fetchHistory` returns payload bytes base64-encoded, so `JSON.stringify(history)` alone
 * hides every input, result and header from a `toContain` search.
 */
export function historyText(history: History): string {
  return JSON.stringify(history, function (this: unknown, key: string, value: unknown) {
    if (key === 'data' && isPayload(this)) return decode(value);
    return value;
  });
}

/** A payload: `{ metadata, data }`, data as base64 text or bytes. */
function isPayload(holder: unknown): boolean {
  return typeof holder === 'object' && holder !== null && 'metadata' in holder && 'data' in holder;
}

function decode(data: unknown): unknown {
  if (typeof data === 'string') return Buffer.from(data, 'base64').toString('utf8');
  if (data instanceof Uint8Array) return Buffer.from(data).toString('utf8');
  // A Node Buffer reaches a replacer already as its toJSON() form.
  const serialized = data as { type?: unknown; data?: unknown } | null;
  if (serialized?.type === 'Buffer' && Array.isArray(serialized.data))
    return Buffer.from(serialized.data as number[]).toString('utf8');
  return data;
}

type HistoryEvents = NonNullable<History['events']>;

/** Whether an event is the local-activity marker of a tool call (`executeCall` run locally). */
export function isLocalExecuteCall(event: HistoryEvents[number]): boolean {
  const data = event.markerRecordedEventAttributes?.details?.data?.payloads?.[0]?.data;
  return (
    data !== undefined &&
    data !== null &&
    (JSON.parse(Buffer.from(data).toString()) as { activity_type?: string }).activity_type === 'executeCall'
  );
}

/** How many tool calls ran as local activities: the `executeCall` local-activity markers of a history. */
export function localExecuteCallMarkers(events: HistoryEvents): number {
  return events.filter(isLocalExecuteCall).length;
}

/** The result of each Plan local-activity marker in a history, as recorded (JSON text). */
export function planMarkerResults(events: HistoryEvents): string[] {
  return events.flatMap((event) => {
    const details = event.markerRecordedEventAttributes?.details;
    const metadata = details?.data?.payloads?.[0]?.data;
    const result = details?.result?.payloads?.[0]?.data;
    if (metadata === undefined || metadata === null || result === undefined || result === null) return [];
    const { activity_type: type } = JSON.parse(Buffer.from(metadata).toString()) as { activity_type?: string };
    return type === 'planCalls' ? [Buffer.from(result).toString()] : [];
  });
}

/** Ids of the calls a whole turn's Plan ran itself (`PlannedCalls.ranFirstGroup`), from its local-activity markers. */
export function callsRunByPlan(events: HistoryEvents): string[] {
  return planMarkerResults(events).flatMap((text) =>
    Object.keys((JSON.parse(text) as { ranFirstGroup?: Record<string, unknown> }).ranFirstGroup ?? {}),
  );
}
