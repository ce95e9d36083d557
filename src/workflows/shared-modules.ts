// Preloaded into the reusable workflow sandbox once, before any session's workflow exists (see
// src/worker/workflow-bundle-options.ts): the modules here, and everything they import, are then shared by every
// workflow in that sandbox instead of being evaluated again for each one (RE2JS and picomatch come in through
// src/contracts/glob-match.ts). Measured with 200 sessions waiting for an approval, the workflow thread's live heap per
// session went from about 0.70 MiB to about 0.62 MiB.
//
// What may be listed: modules whose module-level values never change per session (constants, pure functions, and
// caches of pure results such as the compiled globs of src/contracts/glob-match.ts), which call no workflow API while
// they load, and which do not use zod: the Temporal SDK deep-freezes whatever is shared, and zod schemas define
// properties on themselves lazily, so a shared schema throws on first use. Every src/contracts module the workflows
// import that meets these rules is listed; test/unit/workflow-bundle-options.test.ts checks both directions.
// src/workflows modules are never shared.
import * as backgroundTasks from '../contracts/background-tasks.js';
import * as clipFields from '../contracts/clip-fields.js';
import * as compactPlan from '../contracts/compact-plan.js';
import * as decidePermission from '../contracts/decide-permission.js';
import * as defaults from '../contracts/defaults.js';
import * as errorProjection from '../contracts/error-projection.js';
import * as events from '../contracts/events.js';
import * as groupCalls from '../contracts/group-calls.js';
import * as hookContext from '../contracts/hook-context.js';
import * as localCalls from '../contracts/local-calls.js';
import * as permissionRules from '../contracts/permission-rules.js';
import * as pipeline from '../contracts/pipeline.js';
import * as texts from '../contracts/texts.js';
import * as toolResult from '../contracts/tool-result.js';
import * as turnControl from '../contracts/turn-control.js';
import * as utf8Length from '../contracts/utf8-length.js';

/** Referenced, so the bundler keeps every listed module whole and evaluates it at preload. */
export const sharedModules: readonly object[] = [
  backgroundTasks,
  clipFields,
  compactPlan,
  decidePermission,
  defaults,
  errorProjection,
  events,
  groupCalls,
  hookContext,
  localCalls,
  permissionRules,
  pipeline,
  texts,
  toolResult,
  turnControl,
  utf8Length,
];
