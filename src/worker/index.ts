// `temporal-switchyard/worker`: what a worker process needs — the worker factory, tools (built-in, your own through
// `defineTool`, MCP servers'), hooks, artifact stores, logging and tracing helpers. Loads the Temporal worker runtime.

export {
  NativeConnection,
  createSwitchyardWorker,
  hasPendingApprovalsSearchAttribute,
  namespaceFromEnv,
  prebuiltWorkflowBundlePath,
  taskQueueFromEnv,
  workflowsPath,
} from './create-worker.js';
export type { SwitchyardWorkerOptions } from './create-worker.js';
export { payloadConverterPath, switchyardDataConverter } from '../config/data-converter.js';
export {
  dataDirFromEnv,
  environmentSettings,
  securitySettingsLine,
  settingsFromEnvironment,
  temporalConnectConfigFromEnv,
  toolSettingsFromEnvironment,
} from '../config/settings.js';
export { DEFAULT_TOOL_SETTINGS, useToolSettings } from '../tools/tool-settings.js';
export type { ToolSettings, ToolSettingsSource } from '../tools/tool-settings.js';
export type { EnvironmentSettings, SwitchyardSettings, WorkerSecuritySettings } from '../config/settings.js';
export { SettingsError } from '../config/settings-error.js';
export { TemporalConfigError, describeConnectionSecurity } from '../config/temporal-connection.js';
export type { TemporalConnectConfig, TemporalConnectionFlags } from '../config/temporal-connection.js';
export { PinoTemporalLogger, createLogger } from './logger.js';
export { installTemporalRuntime } from './runtime.js';
export { createToolCallTelemetry, createTracingFromEnv } from './telemetry.js';

export { ToolUseError, defineTool } from '../tools/define-tool.js';
export type {
  ResultBudget,
  TimeoutPolicy,
  Tool,
  ToolDefinition,
  ToolExecutionContext,
  ToolOutput,
  ToolOutputImage,
  ToolOutputObject,
  ToolPrepareContext,
  ValidationOutcome,
} from '../tools/define-tool.js';
export { builtinTools } from '../tools/builtin.js';
export {
  McpConnection,
  McpConnectionError,
  connectMcpTools,
  mcpServersFromConfig,
  mcpToolName,
} from '../tools/mcp/mcp.js';
export type { McpConnectionOptions, McpServerConfig, McpTool } from '../tools/mcp/mcp.js';

export type {
  PermissionRequestHook,
  PermissionRequestHookInput,
  PermissionRequestHookResult,
  PostToolUseFailureHook,
  PostToolUseFailureHookInput,
  PostToolUseHook,
  PostToolUseHookInput,
  PostToolUseHookResult,
  PreToolUseHook,
  PreToolUseHookInput,
  PreToolUseHookResult,
  SwitchyardHooks,
} from '../hooks/types.js';
export { FileArtifactStore } from '../artifacts/file-artifact-store.js';
export type { ArtifactStore } from '../contracts/artifact-store.js';
