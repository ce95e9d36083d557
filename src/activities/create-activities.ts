import { DEFAULT_MAX_CONCURRENCY } from '../contracts/defaults.js';
import type { Activities } from '../contracts/pipeline.js';
import { firstLookOnly, sessionHooks } from '../hooks/session-hooks.js';
import { AdmissionGate, DEFAULT_ADMISSION_GATES } from './admission-gate.js';
import { createAdmitSession } from './admit-session.js';
import { createRunApprovalEvaluator } from './run-approval-evaluator.js';
import type { ActivityDependencies, Warn } from './dependencies.js';
import { createBudgetClientResult } from './budget-client-result.js';
import { createExecuteCall } from './execute-call.js';
import { createPermissionRequestHooks } from './permission-request-hooks.js';
import { createPlanCalls } from './plan-calls.js';
import { createPrepareCalls } from './prepare-calls.js';
import { createStopBackgroundTasks } from './stop-background-tasks.js';
import { createVerifyApproval } from './verify-approval.js';

export type { ActivityDependencies } from './dependencies.js';

/** The activities of a worker, one file each, under the names `Activities` (`src/contracts/pipeline.ts`) records. */
export function createActivities(dependencies: ActivityDependencies) {
  const { registry, workerIdentity, onWarning } = dependencies;
  const warn: Warn = (message, details = {}) => onWarning?.(message, details);
  const hooksOf = sessionHooks({
    ...(dependencies.hooks === undefined ? {} : { hooks: dependencies.hooks }),
    ...(dependencies.userSettingsDir === undefined ? {} : { userSettingsDir: dependencies.userSettingsDir }),
    ...(dependencies.trustedWorkspaces === undefined ? {} : { trustedWorkspaces: dependencies.trustedWorkspaces }),
    warn,
  });
  const gates = new Map(
    Object.entries(dependencies.admissionGates ?? DEFAULT_ADMISSION_GATES).map(([name, permits]) => [
      name,
      new AdmissionGate(name, permits),
    ]),
  );
  const { dataDir } = dependencies;
  const prepareOptions = {
    registry,
    defaultCwd: dependencies.defaultCwd ?? process.cwd(),
    workerIdentity,
    operatorRules: dependencies.operatorRules,
    warn,
  };
  const prepareCalls = createPrepareCalls({ ...prepareOptions, hooksOf });
  const executeDependencies = {
    registry,
    ...(workerIdentity === undefined ? {} : { workerIdentity }),
    gates,
    artifacts: dependencies.artifacts,
    dataDir,
    ...(onWarning === undefined ? {} : { onWarning }),
    ...(dependencies.tracer === undefined ? {} : { tracer: dependencies.tracer }),
  };
  const executeCall = createExecuteCall({ dependencies: executeDependencies, hooksOf });
  const planCalls = createPlanCalls({
    registry,
    defaultMaxConcurrency: dependencies.defaultMaxConcurrency ?? DEFAULT_MAX_CONCURRENCY,
    localCalls: dependencies.localCalls ?? false,
    pendingApprovalsSearchAttribute: dependencies.pendingApprovalsSearchAttribute ?? false,
    workerIdentity,
    // One Plan's Prepare and the calls it then runs share one look at the session's hooks.
    stages: () => {
      const planHooksOf = firstLookOnly(hooksOf);
      return {
        prepareCalls: createPrepareCalls({ ...prepareOptions, hooksOf: planHooksOf }),
        executeCall: createExecuteCall({ dependencies: executeDependencies, hooksOf: planHooksOf }),
      };
    },
    warn,
  });
  return {
    planCalls,
    prepareCalls,
    runPermissionRequestHooks: createPermissionRequestHooks({ hooksOf, warn }),
    stopBackgroundTasks: createStopBackgroundTasks(dataDir),
    runApprovalEvaluator: createRunApprovalEvaluator(dependencies.evaluators ?? []),
    verifyApproval: createVerifyApproval(
      dependencies.approversFile === undefined ? {} : { approversFile: dependencies.approversFile },
    ),
    admitSession: createAdmitSession(dependencies.workerSandboxMode),
    executeCall,
    budgetClientResult: createBudgetClientResult({ artifacts: dependencies.artifacts, warn }),
  } satisfies Activities;
}
