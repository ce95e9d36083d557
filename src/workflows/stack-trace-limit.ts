// Preloaded into the workflow sandbox before the SDK freezes its globals (see src/worker/workflow-bundle-options.ts).
//
// The SDK records a stack trace for every promise that workflow code creates (for the `__stack_trace` query), and
// maps every frame through the bundle's source map: at the default limit of 10 frames that was the largest single
// cost of a tool call on the workflow thread. Switchyard's workflows keep no frames: a workflow error still carries
// its message and type, and a worker started with `workflowStackTraces: true` (`SWITCHYARD_WORKFLOW_STACK_TRACES=1`)
// bundles without this module and gets the SDK's full traces back.
Error.stackTraceLimit = 0;

export {};
