import type { Random } from "./seeded-random.ts";

export const DEFAULT_MAX_WORDS = 300;

const OPENERS = [
  "Any serious look at {t} starts with a simple question.",
  "People have argued about {t} for a long time.",
  "It is easy to underestimate how much {t} shapes everyday life.",
];
const BODY = [
  "One reason is that {t} touches many parts of how we live and work.",
  "Critics point out that the costs of {t} are often hidden at first.",
  "Supporters answer that {t} brings benefits that are hard to measure.",
  "History offers several examples where {t} changed the course of events.",
  "A closer look shows that the details of {t} matter more than the slogans.",
  "Still, the evidence about {t} is mixed and deserves careful reading.",
  "Local experience with {t} often differs from the national picture.",
  "Much depends on who pays for {t} and who gains from it.",
  "The debate about {t} is also a debate about values.",
  "Small changes in how we approach {t} can have large effects.",
];
const CLOSERS = ["In the end, {t} rewards patience and clear thinking.", "So the future of {t} is still ours to decide."];

function countWords(text: string): number {
  return text.match(/\S+/g)?.length ?? 0;
}

/** The prompt's own words, as the topic the sentences talk about. */
function topicOf(prompt: string): string {
  const words =
    prompt
      .match(/[\p{L}\p{N}'-]+/gu)
      ?.filter((w) => w.length > 2)
      .slice(0, 5) ?? [];
  return words.length > 0 ? words.join(" ").toLowerCase() : "this topic";
}

/** An essay of at most `max_words` words (about 85-100 % of it); `word_count` is its real count. */
export function simulateEssay(prompt: string, maxWords: number, random: Random): { text: string; word_count: number } {
  const topic = topicOf(prompt);
  const target = Math.max(1, Math.min(maxWords, Math.floor(maxWords * (0.85 + random.next() * 0.15))));
  const sentence = (templates: readonly string[]) => random.pick(templates).replaceAll("{t}", topic);
  const closer = sentence(CLOSERS);
  const paragraphs: string[][] = [[sentence(OPENERS)]];
  let words = countWords(paragraphs[0]?.[0] ?? "");
  for (;;) {
    const next = sentence(BODY);
    if (words + countWords(next) + countWords(closer) > target) break;
    let paragraph = paragraphs[paragraphs.length - 1] as string[];
    if (paragraph.length >= 5) paragraphs.push((paragraph = []));
    paragraph.push(next);
    words += countWords(next);
  }
  if (words + countWords(closer) <= target) (paragraphs[paragraphs.length - 1] as string[]).push(closer);
  let text = paragraphs.map((p) => p.join(" ")).join("\n\n");
  if (countWords(text) > maxWords) {
    // Only when max_words is shorter than the opening sentence.
    text = `${(text.match(/\S+/g) ?? [])
      .slice(0, maxWords)
      .join(" ")
      .replace(/[.,;:]$/, "")}.`;
  }
  return { text, word_count: countWords(text) };
}
