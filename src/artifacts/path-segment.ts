/**
 * An id as one path segment: `encodeURIComponent`, plus `!'()*` (which it leaves alone and URIs here refuse) and a
 * leading `.` (so `.` and `..` cannot name the root or its parent) percent-encoded. Injective, so no two ids share a
 * segment; ordinary ids keep the name they always had, so existing URIs still resolve.
 */
export function pathSegment(id: string): string {
  if (id === '') throw new Error('An artifact session id or call id must not be empty');
  const percent = (character: string): string => `%${character.charCodeAt(0).toString(16).toUpperCase()}`;
  return encodeURIComponent(id)
    .replace(/[!'()*]/g, percent)
    .replace(/^\./, percent);
}
