import { pcmIdrSlice, pictureParameterSet, sequenceParameterSet, type YuvFrame } from "./h264.ts";
import { intParam, parseSize } from "./media-params.ts";
import { encodeMp4 } from "./mp4.ts";
import type { ProviderFile } from "@gen/providers";
import type { Random } from "./seeded-random.ts";

// Uncompressed (I_PCM) pictures cost 1.5 bytes a pixel, so the simulated video is a thumbnail:
// 64 pixels wide with the aspect ratio of `size`, 5 frames a second, at most 10 seconds (≈230 KB).
const VIDEO_WIDTH = 64;
const VIDEO_FPS = 5;
const MAX_VIDEO_SECONDS = 10;
const DEFAULT_VIDEO_SECONDS = 2;

/** Display size of the simulated video for a requested `size`. */
function videoDimensions(size: unknown): { width: number; height: number } {
  const requested = parseSize(size, { width: VIDEO_WIDTH, height: VIDEO_WIDTH }, 100_000);
  const height = Math.round((VIDEO_WIDTH * requested.height) / requested.width / 2) * 2;
  return { width: VIDEO_WIDTH, height: Math.min(128, Math.max(16, height)) };
}

function clampLuma(value: number): number {
  return Math.max(16, Math.min(235, Math.round(value)));
}

export function simulateVideo(params: Record<string, unknown>, random: Random): ProviderFile {
  const { width, height } = videoDimensions(params.size);
  const codedWidth = Math.ceil(width / 16) * 16;
  const codedHeight = Math.ceil(height / 16) * 16;
  const seconds = intParam(params.duration_seconds, DEFAULT_VIDEO_SECONDS, 1, MAX_VIDEO_SECONDS);
  const frameCount = seconds * VIDEO_FPS;
  const background = random.int(40, 120);
  const box = random.int(170, 235);
  const u = random.int(60, 196);
  const v = random.int(60, 196);
  const side = Math.max(8, Math.round(height / 3));
  const top = random.int(0, height - side);

  const sps = sequenceParameterSet(codedWidth, codedHeight, width, height);
  const pps = pictureParameterSet();
  const samples: Buffer[][] = [];
  for (let f = 0; f < frameCount; f++) {
    // A square slides across a vertical gradient, so consecutive frames differ.
    const left = Math.round(((width - side) * f) / Math.max(1, frameCount - 1));
    const frame: YuvFrame = {
      y: new Uint8Array(codedWidth * codedHeight),
      u: new Uint8Array((codedWidth / 2) * (codedHeight / 2)).fill(u),
      v: new Uint8Array((codedWidth / 2) * (codedHeight / 2)).fill(v),
    };
    for (let y = 0; y < codedHeight; y++) {
      for (let x = 0; x < codedWidth; x++) {
        const inBox = x >= left && x < left + side && y >= top && y < top + side;
        frame.y[y * codedWidth + x] = clampLuma(inBox ? box : background + (y * 60) / codedHeight);
      }
    }
    samples.push([pcmIdrSlice(frame, codedWidth, codedHeight, f % 2)]);
  }
  const data = encodeMp4({ width, height, timescale: 1000, sampleDuration: 1000 / VIDEO_FPS, sps, pps, samples });
  return { contentType: "video/mp4", extension: "mp4", data };
}
