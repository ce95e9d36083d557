// `temporal-switchyard`: the client side — the typed client, the wire contract's names and types, and the adapters
// between model tool-call formats and Switchyard's. No worker or Temporal worker runtime is loaded from here; the
// worker side is `temporal-switchyard/worker`, the workflow bundle entry `temporal-switchyard/workflows`.

export { SessionHandle, StreamingTurn, SwitchyardClient, validateSessionOptions } from './client/switchyard-client.js';
export type { SwitchyardClientOptions } from './client/switchyard-client.js';
export { payloadConverterPath, switchyardDataConverter } from './config/data-converter.js';
export { dataDirFromEnv, settingsFromEnvironment, temporalConnectConfigFromEnv } from './config/settings.js';
export type { SwitchyardSettings } from './config/settings.js';
export { TemporalConfigError, describeConnectionSecurity } from './config/temporal-connection.js';
export type {
  TemporalConnectConfig,
  TemporalConnectionFlags,
  TemporalConnectionSecurity,
} from './config/temporal-connection.js';

// The model adapters, one module per API: export the tools, turn the model's calls into Switchyard calls, turn the
// results into what the API wants back; the stream assemblers run calls while the reply streams.
export {
  ToolExportError,
  modelToolSchemas,
  parseArguments,
  toolInputJsonSchema,
} from './client/model-formats/shared.js';
export type { ArtifactReader, JsonSchema, ModelProvider, ModelToolSchema } from './client/model-formats/shared.js';
export {
  callsFromAnthropic,
  toAnthropicToolResults,
  toAnthropicToolResultsWithImages,
  toAnthropicTools,
} from './client/model-formats/anthropic.js';
export type {
  AnthropicContentBlock,
  AnthropicImageBlock,
  AnthropicTextBlock,
  AnthropicTool,
  AnthropicToolResultBlock,
} from './client/model-formats/anthropic.js';
export {
  callsFromOpenAI,
  toOpenAIChatTools,
  toOpenAIMessagesWithImages,
  toOpenAIToolMessages,
  toOpenAITools,
} from './client/model-formats/openai-chat.js';
export type {
  OpenAIChatTool,
  OpenAIToolMessage,
  OpenAIUserContentPart,
  OpenAIUserMessage,
} from './client/model-formats/openai-chat.js';
export {
  callsFromOpenAIResponses,
  toOpenAIResponsesOutputs,
  toOpenAIResponsesOutputsWithImages,
  toOpenAIResponsesStrictTools,
  toOpenAIResponsesTools,
} from './client/model-formats/openai-responses.js';
export type {
  OpenAIFunctionCallOutput,
  OpenAIResponsesOutputContent,
  OpenAIResponsesOutputItem,
  OpenAIResponsesTool,
} from './client/model-formats/openai-responses.js';
export {
  callsFromGemini,
  toGeminiFunctionResponses,
  toGeminiFunctionResponsesWithImages,
  toGeminiTools,
} from './client/model-formats/gemini.js';
export type {
  GeminiFunctionCall,
  GeminiFunctionDeclaration,
  GeminiFunctionResponsePart,
  GeminiPart,
} from './client/model-formats/gemini.js';
export {
  callsFromAiSdk,
  toAiSdkToolResults,
  toAiSdkToolResultsWithImages,
  toAiSdkTools,
} from './client/model-formats/ai-sdk.js';
export type {
  AiSdkToolCallPart,
  AiSdkToolDefinition,
  AiSdkToolResultOutput,
  AiSdkToolResultPart,
} from './client/model-formats/ai-sdk.js';
export type { StreamTurnTarget } from './client/model-formats/stream-assembler.js';
export { AnthropicToolStream, anthropicToolStream } from './client/model-formats/anthropic-stream.js';
export type { AnthropicStreamEvent } from './client/model-formats/anthropic-stream.js';
export { OpenAIChatToolStream, openAIChatToolStream } from './client/model-formats/openai-chat-stream.js';
export type { OpenAIChatStreamChunk } from './client/model-formats/openai-chat-stream.js';
export {
  OpenAIResponsesToolStream,
  openAIResponsesToolStream,
} from './client/model-formats/openai-responses-stream.js';
export type { OpenAIResponsesStreamEvent } from './client/model-formats/openai-responses-stream.js';
export { serverSentEvents } from './client/model-formats/server-sent-events.js';
export type { ServerSentEvent } from './client/model-formats/server-sent-events.js';
export { clientToolsForModel } from './client/model-formats/client-tools-for-model.js';
export { clientToolSpecSchema, submitToolResultRequestSchema } from './contracts/schemas.js';
export type {
  ClientToolSpec,
  PendingClientCall,
  SubmitToolResultRequest,
  SubmitToolResultResult,
} from './contracts/client-tools.js';

export { FileArtifactStore } from './artifacts/file-artifact-store.js';
export type { PruneReport } from './artifacts/file-artifact-store.js';
export { ARTIFACT_URI_SCHEME } from './contracts/artifact-store.js';
export type { ArtifactPutOptions, ArtifactStore, StoredArtifact } from './contracts/artifact-store.js';

export { approvalDecisions } from './contracts/approval.js';
export { approvalSignalSchema } from './contracts/schemas.js';
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
export { callsInDoubtQuery, resolveInDoubtUpdate } from './contracts/messages.js';
export { resolveInDoubtRequestSchema } from './contracts/schemas.js';
export { idempotencyKeyOf, inDoubtOutcomes, inDoubtSigningPayload } from './contracts/calls-in-doubt.js';
export type {
  CallInDoubt,
  InDoubtOutcome,
  InDoubtSigningPayload,
  ResolveInDoubtRequest,
  ResolveInDoubtResult,
} from './contracts/calls-in-doubt.js';
export { permissionModes } from './contracts/session.js';
export { sessionOptionsSchema } from './contracts/schemas.js';
export type { PermissionMode, PermissionRules, SessionOptions } from './contracts/session.js';
export {
  addCallsRequestSchema,
  awaitResultsRequestSchema,
  executeTurnRequestSchema,
  toolCallSchema,
} from './contracts/schemas.js';
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
