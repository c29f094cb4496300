import { simulateGeneration } from "../src/index.ts";
import { encodePng } from "../src/png.ts";
import { BitReader, findBox, readBoxes, readPng, readSps, readWav, unescapeRbsp } from "./media-readers.ts";

function onlyFile(result: ReturnType<typeof simulateGeneration>) {
  expect(result.files).toHaveLength(1);
  return result.files?.[0] as { contentType: string; extension: string; data: Buffer };
}

describe("PNG writer", () => {
  it("writes a valid truecolour PNG: signature, IHDR, CRCs, inflatable filtered rows", () => {
    const rgb = Buffer.from([255, 0, 0, 0, 255, 0, 0, 0, 255, 10, 20, 30, 40, 50, 60, 70, 80, 90]);
    const png = readPng(encodePng(3, 2, rgb));
    expect(png.chunks.map((c) => c.type)).toEqual(["IHDR", "IDAT", "IEND"]);
    expect([png.width, png.height, png.bitDepth, png.colourType]).toEqual([3, 2, 8, 2]);
    expect(png.raw).toEqual(Buffer.concat([Buffer.from([0]), rgb.subarray(0, 9), Buffer.from([0]), rgb.subarray(9)]));
  });

  it("refuses pixel data of the wrong length", () => {
    expect(() => encodePng(2, 2, Buffer.alloc(5))).toThrow(RangeError);
  });
});

describe("simulated images", () => {
  it("makes n PNGs of the requested size", () => {
    const result = simulateGeneration({ endpoint: "images", model: "sim-image-1", params: { prompt: "a red fox", n: 3, size: "512x256" } });
    expect(result.files).toHaveLength(3);
    for (const file of result.files ?? []) {
      expect(file).toMatchObject({ contentType: "image/png", extension: "png" });
      const png = readPng(file.data);
      expect([png.width, png.height]).toEqual([512, 256]);
      expect(png.raw.length).toBe((512 * 3 + 1) * 256);
    }
    const [first, second] = result.files ?? [];
    expect(first?.data.equals(second?.data ?? Buffer.alloc(0))).toBe(false);
  });

  it("defaults to one 256x256 image", () => {
    const file = onlyFile(simulateGeneration({ endpoint: "images", model: "sim-image-1", params: { prompt: "x" } }));
    const png = readPng(file.data);
    expect([png.width, png.height]).toEqual([256, 256]);
  });
});

describe("simulated audio", () => {
  it("writes a 16-bit mono 16 kHz WAV of duration_seconds", () => {
    const file = onlyFile(simulateGeneration({ endpoint: "audio", model: "sim-audio-1", params: { prompt: "hum", duration_seconds: 3 } }));
    expect(file).toMatchObject({ contentType: "audio/wav", extension: "wav" });
    expect(readWav(file.data)).toEqual({
      riff: "RIFF",
      riffSize: file.data.length - 8,
      wave: "WAVE",
      fmt: "fmt ",
      fmtSize: 16,
      format: 1,
      channels: 1,
      sampleRate: 16000,
      byteRate: 32000,
      blockAlign: 2,
      bitsPerSample: 16,
      dataId: "data",
      dataSize: 3 * 32000,
    });
    // A tone, not silence.
    const samples = Array.from({ length: 1000 }, (_, i) => Math.abs(file.data.readInt16LE(44 + 2 * (8000 + i))));
    expect(Math.max(...samples)).toBeGreaterThan(5000);
  });

  it("defaults to 2 seconds and caps at 30", () => {
    const short = onlyFile(simulateGeneration({ endpoint: "audio", model: "a", params: { prompt: "x" } }));
    const long = onlyFile(simulateGeneration({ endpoint: "audio", model: "a", params: { prompt: "x", duration_seconds: 600 } }));
    expect(readWav(short.data).dataSize).toBe(2 * 32000);
    expect(readWav(long.data).dataSize).toBe(30 * 32000);
  });
});

describe("simulated video", () => {
  const file = onlyFile(simulateGeneration({ endpoint: "videos", model: "sim-video-1", params: { prompt: "waves", size: "640x360", duration_seconds: 3 } }));

  it("is an MP4 with ftyp, moov (before mdat) and mdat", () => {
    expect(file).toMatchObject({ contentType: "video/mp4", extension: "mp4" });
    const top = readBoxes(file.data);
    expect(top.map((b) => b.type)).toEqual(["ftyp", "moov", "mdat"]);
    expect(top[0]?.body.toString("latin1", 0, 4)).toBe("isom");
  });

  it("has one avc1 track with an avcC holding a Constrained Baseline SPS of the thumbnail size", () => {
    const hdlr = findBox(file.data, ["moov", "trak", "mdia", "hdlr"]);
    expect(hdlr.body.toString("latin1", 8, 12)).toBe("vide");
    const avc1 = findBox(file.data, ["moov", "trak", "mdia", "minf", "stbl", "stsd", "avc1"]);
    expect([avc1.body.readUInt16BE(24), avc1.body.readUInt16BE(26)]).toEqual([64, 36]);
    const avcC = findBox(file.data, ["moov", "trak", "mdia", "minf", "stbl", "stsd", "avc1", "avcC"]).body;
    expect([avcC[0], avcC[1], avcC[4]! & 3, avcC[5]! & 0x1f]).toEqual([1, 66, 3, 1]);
    const spsLength = avcC.readUInt16BE(6);
    const sps = readSps(avcC.subarray(8, 8 + spsLength));
    expect(sps).toMatchObject({
      nalType: 7,
      profile: 66,
      constraints: 0xc0,
      pocType: 2,
      frameMbsOnly: 1,
      width: 64,
      height: 36,
      codedWidth: 64,
      codedHeight: 48,
    });
    const pps = avcC.subarray(8 + spsLength + 3);
    expect(avcC[8 + spsLength]).toBe(1);
    expect((pps[0] as number) & 0x1f).toBe(8);
  });

  it("lasts duration_seconds at 5 frames a second, every sample an IDR of I_PCM macroblocks inside mdat", () => {
    const mdhd = findBox(file.data, ["moov", "trak", "mdia", "mdhd"]).body;
    expect(mdhd.readUInt32BE(16) / mdhd.readUInt32BE(12)).toBe(3);
    const stsz = findBox(file.data, ["moov", "trak", "mdia", "minf", "stbl", "stsz"]).body;
    const count = stsz.readUInt32BE(8);
    expect(count).toBe(15);
    const stco = findBox(file.data, ["moov", "trak", "mdia", "minf", "stbl", "stco"]).body;
    const mdat = readBoxes(file.data).find((b) => b.type === "mdat");
    let offset = stco.readUInt32BE(8);
    expect(offset).toBe((mdat?.start ?? 0) + 8);
    for (let i = 0; i < count; i++) {
      const size = stsz.readUInt32BE(12 + 4 * i);
      const nalLength = file.data.readUInt32BE(offset);
      expect(nalLength).toBe(size - 4);
      const rbsp = unescapeRbsp(file.data.subarray(offset + 5, offset + size));
      expect((file.data[offset + 4] as number) & 0x1f).toBe(5);
      const r = new BitReader(rbsp);
      expect([r.ue(), r.ue(), r.ue(), r.u(4), r.ue(), r.u(1), r.u(1), r.ue(), r.ue()]).toEqual([0, 7, 0, 0, i % 2, 0, 0, 0, 1]);
      // 12 macroblocks: mb_type 25 (I_PCM), alignment, 384 samples each; then the stop bit.
      let bit = r.bitPosition;
      for (let mb = 0; mb < 12; mb++) {
        const reader = new BitReader(rbsp.subarray(bit >> 3));
        reader.u(bit & 7);
        expect(reader.ue()).toBe(25);
        bit = Math.ceil(((bit >> 3) * 8 + reader.bitPosition) / 8) * 8 + 384 * 8;
      }
      expect(rbsp.subarray(bit >> 3)).toEqual(Buffer.from([0x80]));
      offset += size;
    }
    expect(offset).toBe(file.data.length);
  });

  it("frames differ (something moves)", () => {
    const stsz = findBox(file.data, ["moov", "trak", "mdia", "minf", "stbl", "stsz"]).body;
    const first = stsz.readUInt32BE(12);
    const start = findBox(file.data, ["moov", "trak", "mdia", "minf", "stbl", "stco"]).body.readUInt32BE(8);
    const a = file.data.subarray(start, start + first);
    const b = file.data.subarray(start + first, start + first + stsz.readUInt32BE(16));
    expect(a.subarray(16).equals(b.subarray(16))).toBe(false);
  });

  it("keeps the aspect ratio of a portrait size and caps the duration", () => {
    const tall = onlyFile(simulateGeneration({ endpoint: "videos", model: "v", params: { prompt: "x", size: "360x640", duration_seconds: 99 } }));
    const avcC = findBox(tall.data, ["moov", "trak", "mdia", "minf", "stbl", "stsd", "avc1", "avcC"]).body;
    expect(readSps(avcC.subarray(8, 8 + avcC.readUInt16BE(6)))).toMatchObject({ width: 64, height: 114, codedHeight: 128 });
    const stsz = findBox(tall.data, ["moov", "trak", "mdia", "minf", "stbl", "stsz"]).body;
    expect(stsz.readUInt32BE(8)).toBe(50);
  });
});
