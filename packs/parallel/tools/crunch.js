// crunch — a CPU-bound QuickJS tool (kind "js") of the parallel pack.
// Input:  { "part": integer, "limit": integer }
// Output: { "part", "primes", "last", "at" }
// Counts the primes below `limit` by trial division, then notes the result in temp/part-<part>.txt, so that each
// step also leaves state for the step that depends on it. `at` is the virtual clock when it finished.
export default function crunch(input, reach) {
  const limit = input.limit;
  let primes = 0;
  let last = 0;
  for (let n = 2; n < limit; n++) {
    let prime = true;
    for (let d = 2; d * d <= n; d++) {
      if (n % d === 0) {
        prime = false;
        break;
      }
    }
    if (prime) {
      primes++;
      last = n;
    }
  }
  reach.fs.write(`temp/part-${input.part}.txt`, `${primes} primes below ${limit}, the last ${last}\n`);
  return { part: input.part, primes, last, at: new Date().toISOString() };
}
