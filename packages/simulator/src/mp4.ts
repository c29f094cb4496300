import { LEVEL_IDC, PROFILE_COMPATIBILITY, PROFILE_IDC } from "./h264.ts";

export interface Mp4VideoTrack {
  width: number;
  height: number;
  /** Ticks per second of the sample durations. */
  timescale: number;
  /** Duration of every sample, in `timescale` ticks. */
  sampleDuration: number;
  sps: Buffer;
  pps: Buffer;
  /** One access unit per sample, each a list of NAL units (without start codes). */
  samples: Buffer[][];
}

function u8(value: number): Buffer {
  return Buffer.from([value & 0xff]);
}
function u16(value: number): Buffer {
  const b = Buffer.alloc(2);
  b.writeUInt16BE(value & 0xffff, 0);
  return b;
}
function u32(value: number): Buffer {
  const b = Buffer.alloc(4);
  b.writeUInt32BE(value >>> 0, 0);
  return b;
}
function zeros(length: number): Buffer {
  return Buffer.alloc(length);
}

function box(type: string, ...payload: Buffer[]): Buffer {
  const body = Buffer.concat(payload);
  return Buffer.concat([u32(8 + body.length), Buffer.from(type, "latin1"), body]);
}

function fullBox(type: string, version: number, flags: number, ...payload: Buffer[]): Buffer {
  return box(type, u32(((version & 0xff) << 24) | (flags & 0xffffff)), ...payload);
}

const UNITY_MATRIX = Buffer.concat([0x00010000, 0, 0, 0, 0x00010000, 0, 0, 0, 0x40000000].map(u32));

/** A progressive MP4 (moov before mdat) holding one H.264 track, playable by browsers. */
export function encodeMp4(track: Mp4VideoTrack): Buffer {
  const sampleData = track.samples.map((nals) => Buffer.concat(nals.flatMap((unit) => [u32(unit.length), unit])));
  const durationTicks = track.sampleDuration * track.samples.length;
  const movieTimescale = 1000;
  const movieDuration = Math.round((durationTicks * movieTimescale) / track.timescale);

  const ftyp = box("ftyp", Buffer.from("isom", "latin1"), u32(0x200), Buffer.from("isomiso2avc1mp41", "latin1"));

  const avcC = box(
    "avcC",
    u8(1), // configurationVersion
    u8(PROFILE_IDC),
    u8(PROFILE_COMPATIBILITY),
    u8(LEVEL_IDC),
    u8(0xff), // lengthSizeMinusOne = 3
    u8(0xe1), // one SPS
    u16(track.sps.length),
    track.sps,
    u8(1), // one PPS
    u16(track.pps.length),
    track.pps,
  );
  const avc1 = box(
    "avc1",
    zeros(6),
    u16(1), // data_reference_index
    zeros(16), // pre_defined, reserved, pre_defined[3]
    u16(track.width),
    u16(track.height),
    u32(0x00480000), // 72 dpi
    u32(0x00480000),
    zeros(4),
    u16(1), // frame_count
    zeros(32), // compressorname
    u16(0x0018), // depth
    u16(0xffff), // pre_defined = -1
    avcC,
  );

  const stbl = (chunkOffset: number) =>
    box(
      "stbl",
      fullBox("stsd", 0, 0, u32(1), avc1),
      fullBox("stts", 0, 0, u32(1), u32(track.samples.length), u32(track.sampleDuration)),
      fullBox("stsc", 0, 0, u32(1), u32(1), u32(track.samples.length), u32(1)),
      fullBox("stsz", 0, 0, u32(0), u32(track.samples.length), ...sampleData.map((s) => u32(s.length))),
      fullBox("stco", 0, 0, u32(1), u32(chunkOffset)),
      // no stss: every sample is a sync sample
    );

  const moov = (chunkOffset: number) =>
    box(
      "moov",
      fullBox("mvhd", 0, 0, u32(0), u32(0), u32(movieTimescale), u32(movieDuration), u32(0x00010000), u16(0x0100), zeros(10), UNITY_MATRIX, zeros(24), u32(2)),
      box(
        "trak",
        fullBox(
          "tkhd",
          0,
          3,
          u32(0),
          u32(0),
          u32(1),
          zeros(4),
          u32(movieDuration),
          zeros(8),
          u16(0),
          u16(0),
          u16(0),
          zeros(2),
          UNITY_MATRIX,
          u32(track.width << 16),
          u32(track.height << 16),
        ),
        box(
          "mdia",
          fullBox("mdhd", 0, 0, u32(0), u32(0), u32(track.timescale), u32(durationTicks), u16(0x55c4 /* "und" */), u16(0)),
          fullBox("hdlr", 0, 0, u32(0), Buffer.from("vide", "latin1"), zeros(12), Buffer.from("VideoHandler\0", "latin1")),
          box("minf", fullBox("vmhd", 0, 1, zeros(8)), box("dinf", fullBox("dref", 0, 0, u32(1), fullBox("url ", 0, 1))), stbl(chunkOffset)),
        ),
      ),
    );

  // The moov size does not depend on the offset value, so measure it once with a placeholder.
  const moovSize = moov(0).length;
  const mdatPayload = Buffer.concat(sampleData);
  const chunkOffset = ftyp.length + moovSize + 8;
  return Buffer.concat([ftyp, moov(chunkOffset), u32(8 + mdatPayload.length), Buffer.from("mdat", "latin1"), mdatPayload]);
}
