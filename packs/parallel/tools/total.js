// total — a QuickJS tool (kind "js") of the parallel pack.
// Input:  { "parts": [integer] }   (each taken from a crunch step's output with {"$step": …, "pointer": "/primes"})
// Output: { "primes": integer, "notes": [string] }
// Adds up the parts and reads back the notes every crunch step left in temp/.
export default function total(input, reach) {
  let primes = 0;
  for (const p of input.parts) primes += p;
  const notes = input.parts.map((_, i) => reach.fs.read(`temp/part-${i + 1}.txt`).trim());
  return { primes, notes };
}
