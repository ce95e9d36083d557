// The package's `temporal-switchyard/workflows` entry: what a user's own workflow code imports — `runToolTurn` and
// its state helpers — and `toolSession`, for users who bundle it into their own worker. (The worker's own bundle
// entry is `index.ts`, which exports only workflow types.)
export { toolSession } from './tool-session.js';
export * from './api.js';
