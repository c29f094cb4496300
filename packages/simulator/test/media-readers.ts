// Independent readers of the formats the simulated provider writes, so tests check the bytes
// against the specifications rather than against the writers.
import { inflateSync } from "node:zlib";

interface PngChunk {
  type: string;
  data: Buffer;
  crc: number;
}

const CRC_TABLE = Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});

function crc(data: Buffer): number {
  let value = 0xffffffff;
  for (const byte of data) value = (CRC_TABLE[(value ^ byte) & 0xff] as number) ^ (value >>> 8);
  return (value ^ 0xffffffff) >>> 0;
}

export function readPng(png: Buffer) {
  if (!png.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]))) throw new Error("no PNG signature");
  const chunks: PngChunk[] = [];
  let offset = 8;
  while (offset < png.length) {
    const length = png.readUInt32BE(offset);
    const type = png.toString("latin1", offset + 4, offset + 8);
    const data = png.subarray(offset + 8, offset + 8 + length);
    const stored = png.readUInt32BE(offset + 8 + length);
    if (crc(png.subarray(offset + 4, offset + 8 + length)) !== stored) throw new Error(`bad CRC in ${type}`);
    chunks.push({ type, data, crc: stored });
    offset += 12 + length;
  }
  const ihdr = chunks[0];
  if (ihdr?.type !== "IHDR" || chunks.at(-1)?.type !== "IEND") throw new Error("chunk order");
  const width = ihdr.data.readUInt32BE(0);
  const height = ihdr.data.readUInt32BE(4);
  const raw = inflateSync(Buffer.concat(chunks.filter((c) => c.type === "IDAT").map((c) => c.data)));
  return { chunks, width, height, bitDepth: ihdr.data[8], colourType: ihdr.data[9], raw };
}

export function readWav(wav: Buffer) {
  return {
    riff: wav.toString("latin1", 0, 4),
    riffSize: wav.readUInt32LE(4),
    wave: wav.toString("latin1", 8, 12),
    fmt: wav.toString("latin1", 12, 16),
    fmtSize: wav.readUInt32LE(16),
    format: wav.readUInt16LE(20),
    channels: wav.readUInt16LE(22),
    sampleRate: wav.readUInt32LE(24),
    byteRate: wav.readUInt32LE(28),
    blockAlign: wav.readUInt16LE(32),
    bitsPerSample: wav.readUInt16LE(34),
    dataId: wav.toString("latin1", 36, 40),
    dataSize: wav.readUInt32LE(40),
  };
}

export interface Box {
  type: string;
  start: number;
  size: number;
  /** The payload after the 8-byte header. */
  body: Buffer;
}

export function readBoxes(data: Buffer, base = 0): Box[] {
  const boxes: Box[] = [];
  let offset = 0;
  while (offset < data.length) {
    const size = data.readUInt32BE(offset);
    if (size < 8 || offset + size > data.length) throw new Error(`bad box size ${size} at ${base + offset}`);
    boxes.push({ type: data.toString("latin1", offset + 4, offset + 8), start: base + offset, size, body: data.subarray(offset + 8, offset + size) });
    offset += size;
  }
  return boxes;
}

/** The box at a path such as ["moov", "trak", "mdia"]; `skip` gives bytes to jump per box type. */
export function findBox(data: Buffer, path: string[]): Box {
  // Full boxes and sample entries have fields before their children.
  const skip: Record<string, number> = { stsd: 8, avc1: 78, dref: 8 };
  let boxes = readBoxes(data);
  let found: Box | undefined;
  for (const type of path) {
    found = boxes.find((b) => b.type === type);
    if (!found) throw new Error(`no ${type} box`);
    const children = found.body.subarray(skip[type] ?? 0);
    try {
      boxes = readBoxes(children);
    } catch {
      boxes = [];
    }
  }
  return found as Box;
}

/** Removes emulation prevention bytes (00 00 03 → 00 00). */
export function unescapeRbsp(nal: Buffer): Buffer {
  const out: number[] = [];
  let zeros = 0;
  for (const byte of nal) {
    if (zeros >= 2 && byte === 3) {
      zeros = 0;
      continue;
    }
    out.push(byte);
    zeros = byte === 0 ? zeros + 1 : 0;
  }
  return Buffer.from(out);
}

export class BitReader {
  private position = 0;
  constructor(private readonly data: Buffer) {}
  u(bits: number): number {
    let value = 0;
    for (let i = 0; i < bits; i++) {
      const byte = this.data[this.position >> 3] as number;
      value = value * 2 + ((byte >> (7 - (this.position & 7))) & 1);
      this.position++;
    }
    return value;
  }
  ue(): number {
    let zeros = 0;
    while (this.u(1) === 0) zeros++;
    return 2 ** zeros - 1 + this.u(zeros);
  }
  get bitPosition(): number {
    return this.position;
  }
}

/** The fields of a Baseline SPS that fix the picture size. */
export function readSps(nal: Buffer) {
  const r = new BitReader(unescapeRbsp(nal.subarray(1)));
  const profile = r.u(8);
  const constraints = r.u(8);
  const level = r.u(8);
  r.ue(); // seq_parameter_set_id
  r.ue(); // log2_max_frame_num_minus4
  const pocType = r.ue();
  r.ue(); // max_num_ref_frames
  r.u(1);
  const widthMbs = r.ue() + 1;
  const heightMbs = r.ue() + 1;
  const frameMbsOnly = r.u(1);
  r.u(1);
  const cropping = r.u(1);
  const crop = cropping ? { left: r.ue(), right: r.ue(), top: r.ue(), bottom: r.ue() } : { left: 0, right: 0, top: 0, bottom: 0 };
  return {
    nalType: (nal[0] as number) & 0x1f,
    profile,
    constraints,
    level,
    pocType,
    frameMbsOnly,
    width: widthMbs * 16 - 2 * (crop.left + crop.right),
    height: heightMbs * 16 - 2 * (crop.top + crop.bottom),
    codedWidth: widthMbs * 16,
    codedHeight: heightMbs * 16,
  };
}
