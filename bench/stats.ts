/** Latency statistics of one contender in one scenario, in milliseconds. */
export interface Stats {
  n: number;
  p50: number;
  p95: number;
  mean: number;
  min: number;
}

const round = (value: number): number => Math.round(value * 10) / 10;

export function stats(samples: readonly number[]): Stats {
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (q: number): number => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN;
  return {
    n: sorted.length,
    p50: round(at(0.5)),
    p95: round(at(0.95)),
    mean: round(sorted.reduce((sum, value) => sum + value, 0) / sorted.length),
    min: round(sorted[0] ?? Number.NaN),
  };
}

export { round };
