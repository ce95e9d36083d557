import { createHash } from 'node:crypto';
import canonicalize from 'canonicalize';

/**
 * The JSON Canonicalization Scheme (RFC 8785) of a value: keys sorted at every level, numbers and strings in one
 * spelling, so equal values always serialise to the same bytes. RFC 8785 refuses strings with a lone surrogate
 * (valid in a model's JSON); such an input is serialised with `JSON.stringify` (which escapes them) behind a tag
 * no canonical text starts with, so it still gets its own digest.
 */
export function canonicalJson(value: unknown): string {
  try {
    return canonicalize(value) ?? 'null';
  } catch {
    return `ill-formed:${JSON.stringify(value) ?? 'null'}`;
  }
}

/** sha256 (hex) of the canonical JSON of an input: what an approval must carry (invariant 2). */
export function inputDigest(value: unknown): string {
  return createHash('sha256').update(canonicalJson(value)).digest('hex');
}
