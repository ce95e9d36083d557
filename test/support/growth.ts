/**
 * How the cost of some work grows with the size of its input, measured so that a loaded machine does not change the
 * answer: a fixed bound such as "under 200 ms" fails when the CI machine is busy, and passes a slow algorithm on a
 * fast one. Instead the same work is timed at two sizes, each over the same number of runs (enough for the smaller to
 * take a few milliseconds), and the fastest of several rounds is kept for each: load only ever adds time, so the
 * fastest round is the one it disturbed least. Linear work at four times the size costs about four times as much;
 * quadratic work sixteen times; a backtracking (exponential) matcher far more.
 */

const MIN_SAMPLE_MS = 5;

function elapsedMs(work: () => unknown, loops: number): number {
  const started = performance.now();
  for (let loop = 0; loop < loops; loop += 1) work();
  return performance.now() - started;
}

async function elapsedMsAsync(work: () => Promise<unknown>, loops: number): Promise<number> {
  const started = performance.now();
  for (let loop = 0; loop < loops; loop += 1) await work();
  return performance.now() - started;
}

/** The ratio of the cost of `large()` to the cost of `small()` (synchronous work). */
export function costRatio(small: () => unknown, large: () => unknown, rounds = 5): number {
  small();
  large();
  let loops = 1;
  while (elapsedMs(small, loops) < MIN_SAMPLE_MS && loops < 1_000_000) loops *= 2;
  let fastestSmall = Number.POSITIVE_INFINITY;
  let fastestLarge = Number.POSITIVE_INFINITY;
  for (let round = 0; round < rounds; round += 1) {
    fastestSmall = Math.min(fastestSmall, elapsedMs(small, loops));
    fastestLarge = Math.min(fastestLarge, elapsedMs(large, loops));
  }
  return fastestLarge / fastestSmall;
}

/** The ratio of the cost of `large()` to the cost of `small()` (asynchronous work, such as a tool's execute). */
export async function costRatioAsync(
  small: () => Promise<unknown>,
  large: () => Promise<unknown>,
  rounds = 5,
): Promise<number> {
  await small();
  await large();
  let loops = 1;
  while ((await elapsedMsAsync(small, loops)) < MIN_SAMPLE_MS && loops < 1_000_000) loops *= 2;
  let fastestSmall = Number.POSITIVE_INFINITY;
  let fastestLarge = Number.POSITIVE_INFINITY;
  for (let round = 0; round < rounds; round += 1) {
    fastestSmall = Math.min(fastestSmall, await elapsedMsAsync(small, loops));
    fastestLarge = Math.min(fastestLarge, await elapsedMsAsync(large, loops));
  }
  return fastestLarge / fastestSmall;
}
