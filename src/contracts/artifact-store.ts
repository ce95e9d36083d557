/** The artifact store's contract: where full outputs live outside Temporal history (claim check). Pure types. */

export const ARTIFACT_URI_SCHEME = 'switchyard-artifact:';

export interface StoredArtifact {
  /** `switchyard-artifact://<session>/<id>`. */
  uri: string;
  /** Where the bytes are, for the `<persisted-output>` envelope. */
  path: string;
  bytes: number;
}

/** What `put` stores: text (`content`), bytes (`data`) or a file the tool wrote (`file`, moved). */
export type ArtifactPutOptions = { sessionId: string; callId: string } & (
  { content: string } | { data: Uint8Array } | { file: string }
);

/** Where full tool outputs live outside Temporal history (claim check). Replace it to share one store between hosts. */
export interface ArtifactStore {
  /** Stores text, bytes (an image of a result), or moves a spool file the tool wrote. */
  put(options: ArtifactPutOptions): Promise<StoredArtifact>;
  /** The artifact as UTF-8 text. */
  read(uri: string): Promise<string>;
  /** The artifact's bytes (images: the model-format adapters read them when they build a request). */
  readBytes(uri: string): Promise<Uint8Array>;
  /** The path of an artifact; throws for a malformed or foreign URI. */
  locate(uri: string): string;
}
