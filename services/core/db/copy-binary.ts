// PostgreSQL's binary COPY format (`COPY ... TO STDOUT (FORMAT binary)`), read as a stream:
// the 11-byte signature PGCOPY\n\377\r\n\0, an int32 of flags, an int32 header extension
// length and that many bytes; then tuples, each an int16 field count and per field an int32
// length (-1: NULL) and that many bytes; and the trailer, a field count of -1. Integers are
// big-endian. (PostgreSQL documentation, COPY, "Binary Format".)
//
// Fields come back as the server's binary representation of their type: bytea is its bytes,
// int2/int4/int8 are big-endian integers (`copyInt`). A field that lies inside one input
// chunk is a view of that chunk; one that spans chunks is copied into its own buffer. The
// caller owns both (nothing else reads the chunks), so it may overwrite them.

export class CopyFormatError extends Error {
  override name = 'CopyFormatError';
}

/** One tuple: a field's bytes, or null for NULL. */
export type CopyRow = (Buffer | null)[];

const SIGNATURE = Buffer.from('PGCOPY\n\xff\r\n\0', 'latin1');
/** Flag bits 16-31 signal incompatible changes (16: OIDs included); a reader must stop. */
const INCOMPATIBLE_FLAGS = 0xffff0000;

/** Where the parser is in the stream. */
const State = {
  Signature: 0,
  Flags: 1,
  ExtensionLength: 2,
  Extension: 3,
  FieldCount: 4,
  FieldLength: 5,
  FieldData: 6,
  Done: 7,
} as const;
type State = (typeof State)[keyof typeof State];

/** The fixed-size part each state reads before it can act (Extension and FieldData vary). */
const HEAD_SIZE: Record<State, number> = {
  [State.Signature]: SIGNATURE.length,
  [State.Flags]: 4,
  [State.ExtensionLength]: 4,
  [State.Extension]: 0,
  [State.FieldCount]: 2,
  [State.FieldLength]: 4,
  [State.FieldData]: 0,
  [State.Done]: 0,
};

export class CopyBinaryParser {
  private state: State = State.Signature;
  /** The bytes of a fixed-size item that began in an earlier chunk. */
  private readonly head = Buffer.alloc(SIGNATURE.length);
  private headFilled = 0;
  /** Bytes of the header extension still to skip. */
  private skip = 0;
  private fieldsLeft = 0;
  private row: CopyRow = [];
  /** A field that spans chunks: its buffer and how much of it has arrived. */
  private field: Buffer | null = null;
  private fieldFilled = 0;
  private fieldLength = 0;

  /** Whether the trailer has been read. */
  get done(): boolean {
    return this.state === State.Done;
  }

  /** The tuples this piece of the stream completes, in order. */
  push(chunk: Buffer): CopyRow[] {
    const rows: CopyRow[] = [];
    let at = 0;
    while (at < chunk.length) {
      const state = this.state;
      if (state === State.Done) throw new CopyFormatError('binary COPY data goes on after its trailer');
      if (state === State.Extension) {
        const n = Math.min(this.skip, chunk.length - at);
        this.skip -= n;
        at += n;
        if (this.skip === 0) this.state = State.FieldCount;
        continue;
      }
      if (state === State.FieldData) {
        at = this.fieldData(chunk, at, rows);
        continue;
      }
      // A fixed-size item: read in place when the chunk holds it whole, else gather it.
      const size = HEAD_SIZE[state];
      let src: Buffer;
      let from: number;
      if (this.headFilled === 0 && chunk.length - at >= size) {
        src = chunk;
        from = at;
        at += size;
      } else {
        const n = Math.min(size - this.headFilled, chunk.length - at);
        chunk.copy(this.head, this.headFilled, at, at + n);
        this.headFilled += n;
        at += n;
        if (this.headFilled < size) break;
        this.headFilled = 0;
        src = this.head;
        from = 0;
      }
      this.item(src, from, rows);
    }
    return rows;
  }

  /** Throws unless the stream ended exactly after its trailer. */
  end(): void {
    if (this.state !== State.Done) {
      throw new CopyFormatError('binary COPY data ends before its trailer');
    }
  }

  /** Acts on the fixed-size item of the current state, found at src[from]. */
  private item(src: Buffer, from: number, rows: CopyRow[]): void {
    switch (this.state) {
      case State.Signature:
        if (src.compare(SIGNATURE, 0, SIGNATURE.length, from, from + SIGNATURE.length) !== 0) {
          throw new CopyFormatError('not binary COPY data: the signature PGCOPY\\n\\377\\r\\n\\0 is missing');
        }
        this.state = State.Flags;
        return;
      case State.Flags: {
        const flags = src.readUInt32BE(from);
        if ((flags & INCOMPATIBLE_FLAGS) !== 0) {
          throw new CopyFormatError(`binary COPY header flags 0x${flags.toString(16)} are not supported`);
        }
        this.state = State.ExtensionLength;
        return;
      }
      case State.ExtensionLength: {
        const length = src.readInt32BE(from);
        if (length < 0) throw new CopyFormatError(`binary COPY header extension length ${length}`);
        this.skip = length;
        this.state = length > 0 ? State.Extension : State.FieldCount;
        return;
      }
      case State.FieldCount: {
        const count = src.readInt16BE(from);
        if (count === -1) {
          this.state = State.Done;
          return;
        }
        if (count < 0) throw new CopyFormatError(`binary COPY tuple with ${count} fields`);
        this.row = [];
        this.fieldsLeft = count;
        if (count === 0) rows.push(this.row);
        else this.state = State.FieldLength;
        return;
      }
      case State.FieldLength: {
        const length = src.readInt32BE(from);
        if (length === -1) {
          this.addField(null, rows);
          return;
        }
        if (length < 0) throw new CopyFormatError(`binary COPY field length ${length}`);
        this.fieldLength = length;
        this.field = null;
        this.fieldFilled = 0;
        this.state = State.FieldData;
        if (length === 0) this.addField(Buffer.alloc(0), rows);
        return;
      }
    }
  }

  /** Reads field bytes from chunk[at]; answers where the chunk's unread part starts. */
  private fieldData(chunk: Buffer, at: number, rows: CopyRow[]): number {
    const available = chunk.length - at;
    if (this.field === null) {
      if (available >= this.fieldLength) {
        this.addField(chunk.subarray(at, at + this.fieldLength), rows);
        return at + this.fieldLength;
      }
      this.field = Buffer.allocUnsafe(this.fieldLength);
    }
    const n = Math.min(this.fieldLength - this.fieldFilled, available);
    chunk.copy(this.field, this.fieldFilled, at, at + n);
    this.fieldFilled += n;
    if (this.fieldFilled === this.fieldLength) {
      const field = this.field;
      this.field = null;
      this.addField(field, rows);
    }
    return at + n;
  }

  private addField(value: Buffer | null, rows: CopyRow[]): void {
    this.row.push(value);
    this.fieldsLeft -= 1;
    if (this.fieldsLeft > 0) {
      this.state = State.FieldLength;
    } else {
      rows.push(this.row);
      this.state = State.FieldCount;
    }
  }
}

/** A binary int2, int4 or int8 field as a number (int8 beyond 2^53 fails). */
export function copyInt(field: Buffer | null): number {
  if (field === null) throw new CopyFormatError('binary COPY integer field is NULL');
  switch (field.length) {
    case 2:
      return field.readInt16BE(0);
    case 4:
      return field.readInt32BE(0);
    case 8: {
      const n = field.readBigInt64BE(0);
      if (n > BigInt(Number.MAX_SAFE_INTEGER) || n < BigInt(Number.MIN_SAFE_INTEGER)) {
        throw new CopyFormatError(`binary COPY integer ${n} is beyond 2^53`);
      }
      return Number(n);
    }
    default:
      throw new CopyFormatError(`binary COPY integer field of ${field.length} bytes`);
  }
}
