// "Did you mean ...?" for misspelled keys, enum values and names in experiment files.

/** The known word within edit distance max(2, len/3) of `word`, if any. */
export function closest(word: string, known: readonly string[]): string | undefined {
  // A truncated name ("multiple" for "multiple_of") is a likelier slip than any edit.
  const lower = word.toLowerCase();
  const prefixed = lower.length >= 3 ? known.find((k) => k.toLowerCase().startsWith(lower)) : undefined;
  if (prefixed) return prefixed;
  let best: string | undefined;
  let bestDistance = Math.max(2, Math.floor(word.length / 3)) + 1;
  for (const candidate of known) {
    const d = editDistance(lower, candidate.toLowerCase());
    if (d < bestDistance) {
      best = candidate;
      bestDistance = d;
    }
  }
  return best;
}

/** ` (did you mean "x"?)` when a known word is close to `word`, else ''. */
export function didYouMean(word: string, known: readonly string[], wrap: (w: string) => string = (w) => w): string {
  const hint = closest(word, known);
  return hint === undefined ? '' : ` (did you mean "${wrap(hint)}"?)`;
}

function editDistance(a: string, b: string): number {
  const row = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    let prev = row[0]!;
    row[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const tmp = row[j]!;
      row[j] = Math.min(row[j]! + 1, row[j - 1]! + 1, prev + (a[i - 1] === b[j - 1] ? 0 : 1));
      prev = tmp;
    }
  }
  return row[b.length]!;
}
