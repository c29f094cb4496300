import { intParam } from "./media-params.ts";
import type { ProviderFile } from "@gen/providers";
import type { Random } from "./seeded-random.ts";
import { encodeWav } from "./wav.ts";

const SAMPLE_RATE = 16_000;
const DEFAULT_AUDIO_SECONDS = 2;
const MAX_AUDIO_SECONDS = 30;
const FADE_SAMPLES = SAMPLE_RATE / 100; // 10 ms, so the tone does not click

/** A WAV (16-bit mono, 16 kHz) with a tone whose pitch and vibrato come from the seed. */
export function simulateAudio(params: Record<string, unknown>, random: Random): ProviderFile {
  const seconds = intParam(params.duration_seconds, DEFAULT_AUDIO_SECONDS, 1, MAX_AUDIO_SECONDS);
  const frequency = random.int(220, 880);
  const vibrato = 1 + random.next() * 5;
  const length = seconds * SAMPLE_RATE;
  const samples = new Int16Array(length);
  let phase = 0;
  for (let i = 0; i < length; i++) {
    const t = i / SAMPLE_RATE;
    phase += (2 * Math.PI * frequency * (1 + 0.02 * Math.sin(2 * Math.PI * vibrato * t))) / SAMPLE_RATE;
    const envelope = Math.min(1, i / FADE_SAMPLES, (length - 1 - i) / FADE_SAMPLES);
    samples[i] = Math.round(Math.sin(phase) * envelope * 0.4 * 32767);
  }
  return { contentType: "audio/wav", extension: "wav", data: encodeWav(samples, SAMPLE_RATE) };
}
