import { BitWriter } from "./bit-writer.ts";

// H.264 Constrained Baseline, every picture an IDR made of I_PCM macroblocks: the samples travel
// uncompressed, so no transform or entropy coder is needed and any decoder can play it.
export const PROFILE_IDC = 66;
export const PROFILE_COMPATIBILITY = 0xc0; // constraint_set0 and constraint_set1: Constrained Baseline
export const LEVEL_IDC = 30;

const NAL_IDR = 5;
const NAL_SPS = 7;
const NAL_PPS = 8;
const MB_TYPE_I_PCM = 25;
const SLICE_TYPE_I_ALL = 7;

/** A 4:2:0 picture whose dimensions are whole macroblocks (multiples of 16). */
export interface YuvFrame {
  y: Uint8Array; // width × height
  u: Uint8Array; // width/2 × height/2
  v: Uint8Array;
}

/** Wraps an RBSP in a NAL unit, inserting emulation prevention bytes. */
function nal(refIdc: number, type: number, rbsp: Buffer): Buffer {
  const out: number[] = [(refIdc << 5) | type];
  let zeros = 0;
  for (const byte of rbsp) {
    if (zeros >= 2 && byte <= 3) {
      out.push(3);
      zeros = 0;
    }
    out.push(byte);
    zeros = byte === 0 ? zeros + 1 : 0;
  }
  return Buffer.from(out);
}

/** Sequence parameter set for a picture of `codedWidth` × `codedHeight`, cropped to `height` rows. */
export function sequenceParameterSet(codedWidth: number, codedHeight: number, width: number, height: number): Buffer {
  const w = new BitWriter()
    .u(8, PROFILE_IDC)
    .u(8, PROFILE_COMPATIBILITY)
    .u(8, LEVEL_IDC)
    .ue(0) // seq_parameter_set_id
    .ue(0) // log2_max_frame_num_minus4
    .ue(2) // pic_order_cnt_type: output order is decoding order
    .ue(1) // max_num_ref_frames
    .u(1, 0) // gaps_in_frame_num_value_allowed_flag
    .ue(codedWidth / 16 - 1)
    .ue(codedHeight / 16 - 1)
    .u(1, 1) // frame_mbs_only_flag
    .u(1, 1); // direct_8x8_inference_flag
  const cropRight = (codedWidth - width) / 2;
  const cropBottom = (codedHeight - height) / 2;
  if (cropRight > 0 || cropBottom > 0) w.u(1, 1).ue(0).ue(cropRight).ue(0).ue(cropBottom);
  else w.u(1, 0);
  // VUI with only bitstream_restriction, so that decoders output each picture at once.
  w.u(1, 1) // vui_parameters_present_flag
    .u(1, 0) // aspect_ratio_info_present_flag
    .u(1, 0) // overscan_info_present_flag
    .u(1, 0) // video_signal_type_present_flag
    .u(1, 0) // chroma_loc_info_present_flag
    .u(1, 0) // timing_info_present_flag
    .u(1, 0) // nal_hrd_parameters_present_flag
    .u(1, 0) // vcl_hrd_parameters_present_flag
    .u(1, 0) // pic_struct_present_flag
    .u(1, 1) // bitstream_restriction_flag
    .u(1, 1) // motion_vectors_over_pic_boundaries_flag
    .ue(0) // max_bytes_per_pic_denom
    .ue(0) // max_bits_per_mb_denom
    .ue(16) // log2_max_mv_length_horizontal
    .ue(16) // log2_max_mv_length_vertical
    .ue(0) // max_num_reorder_frames
    .ue(1) // max_dec_frame_buffering
    .trailing();
  return nal(3, NAL_SPS, w.toBuffer());
}

export function pictureParameterSet(): Buffer {
  const w = new BitWriter()
    .ue(0) // pic_parameter_set_id
    .ue(0) // seq_parameter_set_id
    .u(1, 0) // entropy_coding_mode_flag: CAVLC
    .u(1, 0) // bottom_field_pic_order_in_frame_present_flag
    .ue(0) // num_slice_groups_minus1
    .ue(0) // num_ref_idx_l0_default_active_minus1
    .ue(0) // num_ref_idx_l1_default_active_minus1
    .u(1, 0) // weighted_pred_flag
    .u(2, 0) // weighted_bipred_idc
    .se(0) // pic_init_qp_minus26
    .se(0) // pic_init_qs_minus26
    .se(0) // chroma_qp_index_offset
    .u(1, 1) // deblocking_filter_control_present_flag
    .u(1, 0) // constrained_intra_pred_flag
    .u(1, 0) // redundant_pic_cnt_present_flag
    .trailing();
  return nal(3, NAL_PPS, w.toBuffer());
}

/** One IDR picture as a single slice of I_PCM macroblocks. Consecutive IDRs need different ids. */
export function pcmIdrSlice(frame: YuvFrame, codedWidth: number, codedHeight: number, idrPicId: number): Buffer {
  const w = new BitWriter()
    .ue(0) // first_mb_in_slice
    .ue(SLICE_TYPE_I_ALL)
    .ue(0) // pic_parameter_set_id
    .u(4, 0) // frame_num (log2_max_frame_num = 4)
    .ue(idrPicId)
    .u(1, 0) // no_output_of_prior_pics_flag
    .u(1, 0) // long_term_reference_flag
    .se(0) // slice_qp_delta
    .ue(1); // disable_deblocking_filter_idc: off
  const mbCols = codedWidth / 16;
  const mbRows = codedHeight / 16;
  const block = new Uint8Array(384);
  for (let my = 0; my < mbRows; my++) {
    for (let mx = 0; mx < mbCols; mx++) {
      let i = 0;
      for (let y = 0; y < 16; y++) {
        const row = (my * 16 + y) * codedWidth + mx * 16;
        for (let x = 0; x < 16; x++) block[i++] = frame.y[row + x] as number;
      }
      for (const plane of [frame.u, frame.v]) {
        for (let y = 0; y < 8; y++) {
          const row = (my * 8 + y) * (codedWidth / 2) + mx * 8;
          for (let x = 0; x < 8; x++) block[i++] = plane[row + x] as number;
        }
      }
      w.ue(MB_TYPE_I_PCM).alignZero().raw(block);
    }
  }
  w.trailing();
  return nal(3, NAL_IDR, w.toBuffer());
}
