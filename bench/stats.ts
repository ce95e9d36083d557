/** Latency statistics of one contender in one scenario, in milliseconds. */
export interface Stats {
  n: number;
  p50: number;
  p95: number;
  mean: number;
  min: number;
}

const round = (value: number): number => Math.round(value * 10) / 10;

/** The value at quantile `q` of sorted values, interpolated between neighbours (the usual type-7 quantile). */
function quantile(sorted: readonly number[], q: number): number {
  if (sorted.length === 0) return Number.NaN;
  const position = (sorted.length - 1) * q;
  const below = Math.floor(position);
  const above = Math.min(sorted.length - 1, below + 1);
  return (
    (sorted[below] ?? Number.NaN) + ((sorted[above] ?? Number.NaN) - (sorted[below] ?? Number.NaN)) * (position - below)
  );
}

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

/** The median of same-round ratios and their interquartile range: the only figures that hold on a shared machine. */
export interface PairedRatio {
  /** Pairs measured (rounds in which both contenders ran). */
  pairs: number;
  median: number;
  /** First and third quartiles of the pairs' ratios. */
  q1: number;
  q3: number;
}

/**
 * `numerator[i] / denominator[i]` for every round i both ran (the contenders alternate within a round, so each pair
 * saw the same machine), summarised by its median and quartiles, to two decimals.
 */
export function pairedRatio(numerator: readonly number[], denominator: readonly number[]): PairedRatio {
  const ratios: number[] = [];
  for (let index = 0; index < Math.min(numerator.length, denominator.length); index++) {
    const top = numerator[index];
    const bottom = denominator[index];
    if (top !== undefined && bottom !== undefined && bottom > 0) ratios.push(top / bottom);
  }
  ratios.sort((a, b) => a - b);
  const two = (value: number): number => Math.round(value * 100) / 100;
  return {
    pairs: ratios.length,
    median: two(quantile(ratios, 0.5)),
    q1: two(quantile(ratios, 0.25)),
    q3: two(quantile(ratios, 0.75)),
  };
}

/** `0.97 (0.91–1.04)`: a paired ratio's median and interquartile range. */
export function formatPaired(ratio: PairedRatio | undefined): string {
  if (ratio === undefined || ratio.pairs === 0) return '–';
  return `${ratio.median.toFixed(2)} (${ratio.q1.toFixed(2)}–${ratio.q3.toFixed(2)})`;
}

export { round };
