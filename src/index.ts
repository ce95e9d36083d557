// `temporal-switchyard`: the client side — the typed client, the wire contract's names and types, and the adapters
// between model tool-call formats and Switchyard's. No worker or Temporal worker runtime is loaded from here; the
// worker side is `temporal-switchyard/worker`, the workflow bundle entry `temporal-switchyard/workflows`.

export { SessionHandle, StreamingTurn, SwitchyardClient, validateSessionOptions } from './client/switchyard-client.js';
export type { SwitchyardClientOptions } from './client/switchyard-client.js';
export * from './client/model-format.js';
export { clientToolsForModel } from './client/model-formats/client-tools.js';
export { clientToolSpecSchema, submitToolResultRequestSchema } from './contracts/client-tools.js';
export type { ClientToolSpec, PendingClientCall, SubmitToolResultRequest, SubmitToolResultResult } from './contracts/client-tools.js';

export { FileArtifactStore, dataDirFromEnv } from './artifacts/file-artifact-store.js';
export type { PruneReport } from './artifacts/file-artifact-store.js';
export { ARTIFACT_URI_SCHEME } from './contracts/artifact-store.js';
export type { ArtifactPutOptions, ArtifactStore, StoredArtifact } from './contracts/artifact-store.js';

export { approvalDecisions, approvalSignalSchema } from './contracts/approval.js';
export type { ApprovalDecision, ApprovalRequest, ApprovalSignal } from './contracts/approval.js';
export { DEFAULT_NAMESPACE, DEFAULT_TASK_QUEUE } from './contracts/defaults.js';
export type { EventsPage, SessionEvent, SessionEventType } from './contracts/events.js';
export type { CommandHookConfig, HookEventName, HookMatcherGroup, HookSettings } from './contracts/hook-settings.js';
export {
  activeTurnQuery,
  addCallsUpdate,
  approvalSignal,
  awaitResultsUpdate,
  eventsQuery,
  executeTurnUpdate,
  interruptSignal,
  pendingApprovalsQuery,
  pendingApprovalsSearchAttribute,
  pendingClientCallsQuery,
  submitToolResultUpdate,
  sessionStateQuery,
  toolSessionWorkflowType,
} from './contracts/messages.js';
export type { InterruptSignal, SessionStateView } from './contracts/messages.js';
export { permissionModes, sessionOptionsSchema } from './contracts/session.js';
export type { PermissionMode, PermissionRules, SessionOptions } from './contracts/session.js';
export { addCallsRequestSchema, awaitResultsRequestSchema, executeTurnRequestSchema, toolCallSchema } from './contracts/tool-call.js';
export type { AddCallsRequest, AwaitResultsRequest, ExecuteTurnRequest, ToolCall } from './contracts/tool-call.js';
export { errorCodes, imageMediaTypes, toolResultStatuses } from './contracts/tool-result.js';
export type {
  ActiveTurnView,
  AddCallsResult,
  AwaitResultsResult,
  CallStatus,
  ContentBlock,
  DiffHunk,
  ImageMediaType,
  ResultBudgetInfo,
  ToolDisplay,
  ToolResult,
  ToolResultStatus,
  ToolResultTimings,
  TurnResult,
} from './contracts/tool-result.js';
