import type { Random } from "./seeded-random.ts";

const MODERATION_CATEGORIES = [
  "harassment",
  "harassment/threatening",
  "hate",
  "hate/threatening",
  "illicit",
  "illicit/violent",
  "self-harm",
  "self-harm/intent",
  "self-harm/instructions",
  "sexual",
  "sexual/minors",
  "violence",
  "violence/graphic",
] as const;

type ModerationCategory = (typeof MODERATION_CATEGORIES)[number];

/** Words that flag a category; matched as whole words, case-insensitive. */
const FLAG_WORDS: Readonly<Partial<Record<ModerationCategory, readonly string[]>>> = {
  harassment: ["idiot", "stupid", "loser"],
  "harassment/threatening": ["hunt you down"],
  hate: ["hate", "bigot"],
  illicit: ["steal", "counterfeit", "smuggle"],
  "illicit/violent": ["bomb", "explosive"],
  "self-harm": ["suicide", "self-harm"],
  sexual: ["nsfw", "porn", "explicit"],
  violence: ["kill", "murder", "attack"],
  "violence/graphic": ["gore", "dismember"],
};

const FLAG_THRESHOLD = 0.5;

function escape(word: string): string {
  return word.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

/** Scores per category over every input string (the highest wins), flags at 0.5 and above. */
export function simulateModeration(inputs: readonly string[], random: Random) {
  const categories = {} as Record<ModerationCategory, boolean>;
  const scores = {} as Record<ModerationCategory, number>;
  for (const category of MODERATION_CATEGORIES) {
    const words = FLAG_WORDS[category] ?? [];
    const hit = words.some((word) => inputs.some((text) => new RegExp(`\\b${escape(word)}\\b`, "i").test(text)));
    const score = hit ? 0.85 + random.next() * 0.14 : random.next() * 0.02;
    scores[category] = Math.round(score * 1e6) / 1e6;
    categories[category] = scores[category] >= FLAG_THRESHOLD;
  }
  return { flagged: Object.values(categories).some(Boolean), categories, category_scores: scores };
}
