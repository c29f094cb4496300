// Plain-word swaps and contractions: a light, deterministic rewrite that keeps the meaning.
const REWRITES: ReadonlyArray<[RegExp, string]> = [
  [/\bdo not\b/gi, "don't"],
  [/\bdoes not\b/gi, "doesn't"],
  [/\bdid not\b/gi, "didn't"],
  [/\bis not\b/gi, "isn't"],
  [/\bare not\b/gi, "aren't"],
  [/\bcannot\b/gi, "can't"],
  [/\bwill not\b/gi, "won't"],
  [/\bit is\b/gi, "it's"],
  [/\bthat is\b/gi, "that's"],
  [/\bthere is\b/gi, "there's"],
  [/\bwe are\b/gi, "we're"],
  [/\bthey are\b/gi, "they're"],
  [/\byou are\b/gi, "you're"],
  [/\bin order to\b/gi, "to"],
  [/\butilize\b/gi, "use"],
  [/\butilizes\b/gi, "uses"],
  [/\bfurthermore\b/gi, "plus"],
  [/\bmoreover\b/gi, "also"],
  [/\badditionally\b/gi, "also"],
  [/\bhowever\b/gi, "but"],
  [/\btherefore\b/gi, "so"],
  [/\bnumerous\b/gi, "many"],
  [/\bapproximately\b/gi, "about"],
  [/\bindividuals\b/gi, "people"],
  [/\bcommence\b/gi, "start"],
  [/\bdemonstrate\b/gi, "show"],
  [/\bobtain\b/gi, "get"],
  [/\bpurchase\b/gi, "buy"],
  [/\bassist\b/gi, "help"],
  [/\bsufficient\b/gi, "enough"],
  [/\bdelve into\b/gi, "dig into"],
];

function matchCase(original: string, replacement: string): string {
  const first = original[0];
  if (first !== undefined && first !== first.toLowerCase()) return replacement[0]?.toUpperCase() + replacement.slice(1);
  return replacement;
}

export function simulateHumanize(text: string): { text: string } {
  let result = text;
  for (const [pattern, replacement] of REWRITES) result = result.replace(pattern, (found) => matchCase(found, replacement));
  return { text: result };
}
