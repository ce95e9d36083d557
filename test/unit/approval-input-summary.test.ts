import { describe, expect, it } from 'vitest';
import { INPUT_SUMMARY_MAX_CHARS, approvalDecisionSource, approvalInputSummary } from '../../src/contracts/approval.js';

describe('approvalInputSummary', () => {
  it('names what the call runs: the command, the path, the URL, else compact JSON', () => {
    expect(approvalInputSummary('Bash', { command: 'npm test', description: 'tests' })).toBe('npm test');
    expect(approvalInputSummary('Write', { file_path: 'src/a.ts', content: 'x'.repeat(10_000) })).toBe('src/a.ts');
    expect(approvalInputSummary('WebFetch', { url: 'https://example.com/', prompt: 'read' })).toBe(
      'https://example.com/',
    );
    expect(approvalInputSummary('Grep', { pattern: 'TODO', path: 'src' })).toBe('TODO in src');
    expect(approvalInputSummary('ClickButton', { selector: '#ok' })).toBe('{"selector":"#ok"}');
  });

  it('shows a second line of a command as an escape instead of hiding it, and stays bounded', () => {
    expect(approvalInputSummary('Bash', { command: 'ls\nrm -rf ~\t#' })).toBe('ls\\nrm -rf ~\\t#');
    expect(approvalInputSummary('Bash', { command: 'a\u0007b' })).toBe('a\\u0007b');
    const long = approvalInputSummary('Bash', { command: `echo ${'y'.repeat(5_000)}` });
    expect(long).toHaveLength(INPUT_SUMMARY_MAX_CHARS);
    expect(long.endsWith('…')).toBe(true);
    const pairs = approvalInputSummary('Bash', { command: '😀'.repeat(500) });
    expect(pairs.length).toBeLessThanOrEqual(INPUT_SUMMARY_MAX_CHARS);
    expect(pairs).not.toMatch(/[\uD800-\uDBFF]…$/);
  });

  it('tells evaluators and hooks from people by how the log names them', () => {
    expect(approvalDecisionSource('evaluator:risk')).toBe('evaluator');
    expect(approvalDecisionSource('hook:./approve.sh')).toBe('hook');
    expect(approvalDecisionSource('policy:alice')).toBe('policy');
    expect(approvalDecisionSource('alice')).toBe('person');
    expect(approvalDecisionSource(undefined)).toBe('person');
  });
});
