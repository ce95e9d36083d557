// The zod schemas of the wire contract, as named exports for clients, the CLI, activities and the package's users.
//
// Why they live here and not in the modules that define them: the workflow sandbox evaluates the workflow modules once
// per worker and shares them between every session (src/workflows/shared-modules.ts), and the Temporal SDK then
// deep-freezes every value those modules export. A frozen zod schema throws on its first parse (zod caches on the
// schema object). So a module the workflows load keeps its schemas in a module-level constant and hands them out
// through a function (`sessionSchemas()`, `toolCallSchemas()`, ...), which the freeze cannot see into; the workflows
// call that function, and this module, which no workflow imports, gives them their public names.
// test/unit/workflow-sharing.test.ts checks that no module the workflows load exports a schema.
import { approvalSchemas } from './approval.js';
import { callsInDoubtSchemas } from './calls-in-doubt.js';
import { clientToolsSchemas } from './client-tools.js';
import { policySchemas } from './policy.js';
import { sessionSchemas } from './session.js';
import { toolCallSchemas } from './tool-call.js';

/** Payload of the `approval` signal. */
export const approvalSignalSchema = approvalSchemas().signal;

/** Payload of the `resolveInDoubt` update. */
export const resolveInDoubtRequestSchema = callsInDoubtSchemas().resolveInDoubt;

/** A tool the client runs itself, as `SessionOptions.clientTools` declares it. */
export const clientToolSpecSchema = clientToolsSchemas().spec;
/** Payload of the `submitToolResult` update. */
export const submitToolResultRequestSchema = clientToolsSchemas().submitToolResult;

/** Payload of the `setPolicy` update. */
export const setPolicyRequestSchema = policySchemas().setPolicy;
/** The operator's policy file (`SWITCHYARD_POLICY_FILE`). */
export const operatorPolicyFileSchema = policySchemas().operatorPolicyFile;
/** What an approval evaluator answers. */
export const evaluationResultSchema = policySchemas().evaluationResult;

/** Allow, ask and deny rule lists. */
export const permissionRulesSchema = sessionSchemas().permissionRules;
/** A count limit on calls matching a rule. */
export const callLimitSchema = sessionSchemas().callLimit;
/** The OS sandbox options of a session. */
export const sandboxOptionsSchema = sessionSchemas().sandboxOptions;
/** Start input of the `toolSession` workflow. */
export const sessionOptionsSchema = sessionSchemas().options;

/** One tool call as the model produced it. */
export const toolCallSchema = toolCallSchemas().call;
/** Payload of the `executeTurn` update. */
export const executeTurnRequestSchema = toolCallSchemas().executeTurn;
/** Payload of the `addCalls` update. */
export const addCallsRequestSchema = toolCallSchemas().addCalls;
/** Payload of the `awaitResults` update. */
export const awaitResultsRequestSchema = toolCallSchemas().awaitResults;
