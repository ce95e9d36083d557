import { describe, expect, it } from 'vitest';
import { switchFromEnv } from '../../src/worker/create-worker.js';
import { optInFromEnv } from '../../src/config/environment.js';

describe('switchFromEnv (worker switches that are on by default)', () => {
  it('stays on when unset or set to anything but an off word', () => {
    expect(switchFromEnv('SWITCHYARD_LOCAL_READ_ONLY_CALLS', {})).toBe(true);
    expect(switchFromEnv('SWITCHYARD_LOCAL_READ_ONLY_CALLS', { SWITCHYARD_LOCAL_READ_ONLY_CALLS: 'true' })).toBe(true);
    expect(switchFromEnv('SWITCHYARD_LOCAL_READ_ONLY_CALLS', { SWITCHYARD_LOCAL_READ_ONLY_CALLS: '1' })).toBe(true);
  });

  it.each(['false', 'FALSE', ' off ', '0', 'no'])('turns off with %j', (value) => {
    expect(switchFromEnv('SWITCHYARD_REQUIRE_SEARCH_ATTRIBUTE', { SWITCHYARD_REQUIRE_SEARCH_ATTRIBUTE: value })).toBe(
      false,
    );
  });
});

describe('optInFromEnv (switches that are off by default)', () => {
  it('stays off when unset or set to anything but an on word', () => {
    expect(optInFromEnv('SWITCHYARD_WORKFLOW_STACK_TRACES', {})).toBe(false);
    expect(optInFromEnv('SWITCHYARD_WORKFLOW_STACK_TRACES', { SWITCHYARD_WORKFLOW_STACK_TRACES: 'full' })).toBe(false);
    expect(optInFromEnv('SWITCHYARD_WORKFLOW_STACK_TRACES', { SWITCHYARD_WORKFLOW_STACK_TRACES: '0' })).toBe(false);
  });

  it.each(['1', 'true', ' ON ', 'yes'])('turns on with %j', (value) => {
    expect(optInFromEnv('SWITCHYARD_WORKFLOW_STACK_TRACES', { SWITCHYARD_WORKFLOW_STACK_TRACES: value })).toBe(true);
  });
});
