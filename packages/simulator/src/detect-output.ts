import type { Random } from "./seeded-random.ts";

/** At or above: "ai"; at or below HUMAN_THRESHOLD: "human"; between: "mixed". */
const AI_THRESHOLD = 0.7;
const HUMAN_THRESHOLD = 0.3;

// Words that machine-written prose overuses; each one found nudges the score up.
const MARKERS = ["delve", "furthermore", "moreover", "additionally", "in conclusion", "tapestry", "crucial", "leverage", "overall"];

function detectLabel(probability: number): "ai" | "human" | "mixed" {
  if (probability >= AI_THRESHOLD) return "ai";
  if (probability <= HUMAN_THRESHOLD) return "human";
  return "mixed";
}

export function simulateDetect(text: string, random: Random): { ai_probability: number; label: "ai" | "human" | "mixed" } {
  const lower = text.toLowerCase();
  const markers = MARKERS.filter((marker) => lower.includes(marker)).length;
  const probability = Math.min(1, random.next() * 0.8 + markers * 0.15);
  const rounded = Math.round(probability * 1000) / 1000;
  return { ai_probability: rounded, label: detectLabel(rounded) };
}
