/** MSB-first bit writer for H.264 RBSP syntax (u(n), ue(v), se(v)). */
export class BitWriter {
  private readonly bytes: number[] = [];
  private current = 0;
  private used = 0;

  u(bits: number, value: number): this {
    for (let i = bits - 1; i >= 0; i--) this.bit((value >>> i) & 1);
    return this;
  }

  ue(value: number): this {
    const code = value + 1;
    const length = 32 - Math.clz32(code);
    this.u(length - 1, 0);
    return this.u(length, code);
  }

  se(value: number): this {
    return this.ue(value > 0 ? 2 * value - 1 : -2 * value);
  }

  /** Pads with zero bits up to the next byte boundary. */
  alignZero(): this {
    while (this.used !== 0) this.bit(0);
    return this;
  }

  /** Appends whole bytes; the writer must be byte aligned. */
  raw(data: Uint8Array): this {
    if (this.used !== 0) throw new Error("raw() needs byte alignment");
    for (const byte of data) this.bytes.push(byte);
    return this;
  }

  /** rbsp_trailing_bits: a stop bit, then zero bits to the byte boundary. */
  trailing(): this {
    return this.bit(1).alignZero();
  }

  toBuffer(): Buffer {
    if (this.used !== 0) throw new Error("unaligned bit stream");
    return Buffer.from(this.bytes);
  }

  private bit(value: number): this {
    this.current = (this.current << 1) | value;
    this.used++;
    if (this.used === 8) {
      this.bytes.push(this.current);
      this.current = 0;
      this.used = 0;
    }
    return this;
  }
}
