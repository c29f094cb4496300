import { endianness } from "node:os";

/** A RIFF/WAVE file of 16-bit little-endian PCM samples, mono. */
export function encodeWav(samples: Int16Array, sampleRate: number): Buffer {
  const dataBytes = samples.length * 2;
  const out = Buffer.alloc(44 + dataBytes);
  out.write("RIFF", 0, "latin1");
  out.writeUInt32LE(36 + dataBytes, 4);
  out.write("WAVE", 8, "latin1");
  out.write("fmt ", 12, "latin1");
  out.writeUInt32LE(16, 16); // fmt chunk size
  out.writeUInt16LE(1, 20); // PCM
  out.writeUInt16LE(1, 22); // channels
  out.writeUInt32LE(sampleRate, 24);
  out.writeUInt32LE(sampleRate * 2, 28); // byte rate
  out.writeUInt16LE(2, 32); // block align
  out.writeUInt16LE(16, 34); // bits per sample
  out.write("data", 36, "latin1");
  out.writeUInt32LE(dataBytes, 40);
  if (endianness() === "LE") out.set(new Uint8Array(samples.buffer, samples.byteOffset, dataBytes), 44);
  else for (let i = 0; i < samples.length; i++) out.writeInt16LE(samples[i] as number, 44 + i * 2);
  return out;
}
