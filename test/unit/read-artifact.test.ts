import { describe, expect, it } from 'vitest';
import { FileArtifactStore, pathSegment } from '../../src/artifacts/file-artifact-store.js';
import { artifactReferenceProblem, isArtifactReference, openArtifact } from '../../src/tools/builtin/read-artifact.js';
import { scratchDir } from '../support/scratch.js';

describe('Read of an artifact reference', () => {
  it("accepts the session's own references, its id encoded as the store encodes it", () => {
    for (const sessionId of ['s1', 'agent run/7', '.hidden', "it's (mine)"]) {
      expect(
        artifactReferenceProblem(`switchyard-artifact://${pathSegment(sessionId)}/call-tool-result-1`, sessionId),
      ).toBeUndefined();
    }
  });

  it("refuses another session's reference and malformed ones, naming why", () => {
    expect(artifactReferenceProblem('switchyard-artifact://other/call-tool-result-1', 'mine')).toContain(
      'belongs to another session',
    );
    expect(artifactReferenceProblem('switchyard-artifact://mine/../other/x', 'mine')).toContain(
      'Not a Switchyard artifact reference',
    );
    expect(artifactReferenceProblem('switchyard-artifact://%E0%A4%A/x', 'mine')).toContain(
      'Not a Switchyard artifact reference',
    );
    expect(isArtifactReference('switchyard-artifact://a/b')).toBe(true);
    expect(isArtifactReference('notes/switchyard-artifact://a/b')).toBe(false);
  });

  it('says an artifact was not found without naming where the worker keeps it', async () => {
    const root = await scratchDir();
    const store = new FileArtifactStore(root);
    const opened = openArtifact('switchyard-artifact://mine/gone', { sessionId: 'mine', artifacts: store });
    await expect(opened).rejects.toThrow(
      'Artifact not found: switchyard-artifact://mine/gone (it may have been pruned)',
    );
    await expect(opened).rejects.not.toThrow(root);
  });
});
