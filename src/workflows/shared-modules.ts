// Preloaded into the reusable workflow sandbox once, before any session's workflow exists (see
// src/worker/workflow-bundle-options.ts): the workflow modules, and everything they import (src/contracts, zod, RE2JS,
// picomatch), are then evaluated once per worker and shared by every workflow in that sandbox, instead of being
// evaluated again for each one. Measured with 200 sessions waiting for an approval, the worker's memory per waiting
// session went from about 1.16 MiB to about 0.25 MiB (BENCHMARKS.md has the figures of `npm run bench`).
//
// What sharing asks of every module the workflows load (test/unit/workflow-sharing.test.ts checks it):
// - No per-workflow state at module level: no `let` or `var`, no collection that a workflow fills. A workflow's
//   state lives in the objects its run creates (src/workflows/session-state.ts), or, where a helper needs it without
//   being handed those, on the sandbox's global object, which the SDK keeps per workflow
//   (src/workflows/local-activity-barrier.ts). Module-level constants, pure functions and caches of pure results (the
//   compiled globs of src/contracts/glob-match.ts) are fine.
// - No workflow API while the module loads (no workflow exists yet); creating definitions, activity and sink proxies
//   is fine, they reach the workflow only when called.
// - No exported zod schema: the SDK deep-freezes whatever shared modules export, and a frozen zod schema throws on its
//   first parse. Schemas stay in a module-level constant behind a function (`sessionSchemas()`); their public names
//   are in src/contracts/schemas.ts, which no workflow imports.
import * as workflows from './index.js';

/** Referenced, so the bundler keeps the workflow modules whole and evaluates them at preload. */
export const sharedModules: readonly object[] = [workflows];
