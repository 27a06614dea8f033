/** A field of a byte layout (layout.ts): its offset, kind and, for a bit range, where in its word. */
export type FieldKind = 'u8' | 'u16' | 'u32' | 'u64' | 'u64n' | 'bytes';

export interface FieldSpec {
  readonly offset: number;
  readonly kind: FieldKind;
  /** For bytes. */
  readonly length?: number;
  /** For a bit range inside a u8/u16/u32 word, or (at most 32 bits wide) inside a u64 word. */
  readonly shift?: number;
  readonly bits?: number;
}
