// Types for the parts of `seek-bzip` (CommonJS, untyped) that bzip2.ts uses.
declare module 'seek-bzip' {
  interface BunzipInput {
    readByte(): number;
    read(buffer: Uint8Array, offset: number, length: number): number;
    seek(pos: number): void;
  }
  interface BunzipOutput {
    writeByte(byte: number): void;
  }
  const Bunzip: {
    /** Decodes into `output`; throws a TypeError with `errorCode` on bad data. */
    decode(input: BunzipInput, output: BunzipOutput, multistream: boolean): undefined;
  };
  export default Bunzip;
}
