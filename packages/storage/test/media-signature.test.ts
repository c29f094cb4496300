import { bytesMatchType } from "../src/index.ts";

const hex = (text: string) => Buffer.from(text.replace(/\s/g, ""), "hex");
const RIFF = (kind: string) => Buffer.concat([Buffer.from("RIFF"), Buffer.alloc(4), Buffer.from(kind), Buffer.alloc(16)]);
const SAMPLES: Record<string, Buffer> = {
  png: hex("89504e470d0a1a0a 0000000d49484452"),
  jpg: hex("ffd8ffe000104a464946"),
  webp: RIFF("WEBP"),
  gif: Buffer.from("GIF89a\x01\x00\x01\x00"),
  mp4: Buffer.concat([hex("00000018"), Buffer.from("ftypisom"), Buffer.alloc(12)]),
  webm: hex("1a45dfa3 9f4286810142f7"),
  wav: RIFF("WAVE"),
  mp3id3: Buffer.from("ID3\x04\x00\x00\x00\x00\x00\x00"),
  mp3frame: hex("fffb9064 00000000"),
  ogg: Buffer.from("OggS\x00\x02"),
  json: Buffer.from('{"ok":true,"n":[1,2]}'),
  text: Buffer.from("héllo, wörld\n"),
  html: Buffer.from("<!doctype html><script>alert(1)</script>"),
};

const MATCHES: [type: string, sample: string][] = [
  ["image/png", "png"],
  ["image/jpeg", "jpg"],
  ["image/webp", "webp"],
  ["image/gif", "gif"],
  ["video/mp4", "mp4"],
  ["video/webm", "webm"],
  ["audio/wav", "wav"],
  ["audio/x-wav", "wav"],
  ["audio/mpeg", "mp3id3"],
  ["audio/mpeg", "mp3frame"],
  ["audio/ogg", "ogg"],
  ["application/json; charset=utf-8", "json"],
  ["text/plain", "text"],
  ["text/plain", "html"],
  ["text/plain", "json"],
];

test.each(MATCHES)("%s accepts a real %s", (type, sample) => {
  expect(bytesMatchType(type, SAMPLES[sample]!)).toBe(true);
});

const MISMATCHES: [type: string, data: Buffer][] = [
  ["image/png", SAMPLES.html!],
  ["image/png", SAMPLES.jpg!],
  ["image/png", Buffer.alloc(0)],
  ["image/png", hex("89504e47")],
  ["image/jpeg", SAMPLES.png!],
  ["image/webp", SAMPLES.wav!],
  ["image/gif", SAMPLES.json!],
  ["video/mp4", SAMPLES.html!],
  ["video/webm", SAMPLES.mp4!],
  ["audio/wav", SAMPLES.webp!],
  ["audio/mpeg", SAMPLES.text!],
  ["audio/ogg", SAMPLES.wav!],
  ["application/json", SAMPLES.html!],
  ["application/json", Buffer.from('{"a":1')],
  ["application/json", Buffer.from('{"a":"\u0000"}'.replace("\\u0000", "\0"))],
  ["application/json", hex("7b2261223a22ff227d")],
  ["text/plain", Buffer.from("a\0b")],
  ["text/plain", hex("c328")],
  ["text/plain", hex("eda080")],
  ["text/html", SAMPLES.html!],
  ["application/octet-stream", SAMPLES.png!],
  ["image/svg+xml", Buffer.from("<svg/>")],
];

test.each(MISMATCHES)("%s refuses %p", (type, data) => {
  expect(bytesMatchType(type, data)).toBe(false);
});
