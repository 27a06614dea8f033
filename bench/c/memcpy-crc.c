/*
 * Reference: how fast this machine moves and checksums a 1 MiB message. RoCEv2 protects
 * every packet with an ICRC, a CRC-32 of the same polynomial as zlib and Ethernet, so the
 * software NIC's bandwidth is bounded by copy + CRC. Five measures over 1 MiB buffers:
 * memcpy alone, CRC-32 alone, memcpy then CRC-32 of the copy, with the CRC table-driven
 * slicing-by-8 (eight 256-entry tables, eight bytes per step; the reflected polynomial
 * 0xEDB88320, initial and final value 0xFFFFFFFF) and with zlib's crc32() (the same CRC; zlib
 * folds with carry-less multiplies where the CPU has them), and with libdeflate's
 * libdeflate_crc32() when the system has it (Debian libdeflate0, loaded with dlopen, so no
 * header is needed): the CRC-32 the software NIC's ICRC uses for long frames when it can
 * (drivers/emu/model/wire/native-crc32.ts), and the fastest C has here. Without it the two
 * libdeflate figures are 0.
 *
 * Usage: memcpy-crc [seconds=1]
 * Prints one JSON line: GB/s (1e9 bytes per second) from the median time of one 1 MiB pass.
 */
#define _GNU_SOURCE
#include <string.h>
#include <dlfcn.h>
#include <zlib.h> /* crc32(); linked with -lz (Debian: zlib1g-dev) */
#include "common.h"

#if __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "the slicing-by-8 step below reads words little-endian"
#endif

enum { BUFFER_BYTES = 1 << 20, MAX_PASSES = 1 << 16, WARMUP_PASSES = 20 };
static const uint32_t CRC32_POLY_REFLECTED = 0xEDB88320u;
static uint32_t crc_table[8][256];

static void crc32_init(void) {
  for (uint32_t n = 0; n < 256; n++) {
    uint32_t c = n;
    for (int k = 0; k < 8; k++) c = (c & 1) ? CRC32_POLY_REFLECTED ^ (c >> 1) : c >> 1;
    crc_table[0][n] = c;
  }
  /* table[k][n]: the CRC of byte n followed by k zero bytes. */
  for (uint32_t n = 0; n < 256; n++)
    for (int k = 1; k < 8; k++) crc_table[k][n] = (crc_table[k - 1][n] >> 8) ^ crc_table[0][crc_table[k - 1][n] & 0xff];
}

static uint32_t crc32_bytewise(uint32_t crc, const uint8_t *p, size_t len) {
  crc = ~crc;
  while (len--) crc = crc_table[0][(crc ^ *p++) & 0xff] ^ (crc >> 8);
  return ~crc;
}

static uint32_t crc32_slice8(uint32_t crc, const uint8_t *p, size_t len) {
  crc = ~crc;
  while (len > 0 && ((uintptr_t)p & 7) != 0) {
    crc = crc_table[0][(crc ^ *p++) & 0xff] ^ (crc >> 8);
    len--;
  }
  while (len >= 8) {
    uint32_t lo, hi;
    memcpy(&lo, p, 4);
    memcpy(&hi, p + 4, 4);
    lo ^= crc;
    crc = crc_table[7][lo & 0xff] ^ crc_table[6][(lo >> 8) & 0xff] ^
          crc_table[5][(lo >> 16) & 0xff] ^ crc_table[4][lo >> 24] ^
          crc_table[3][hi & 0xff] ^ crc_table[2][(hi >> 8) & 0xff] ^
          crc_table[1][(hi >> 16) & 0xff] ^ crc_table[0][hi >> 24];
    p += 8;
    len -= 8;
  }
  while (len--) crc = crc_table[0][(crc ^ *p++) & 0xff] ^ (crc >> 8);
  return ~crc;
}

enum measure_kind { COPY, CRC, COPY_THEN_CRC, ZCRC, COPY_THEN_ZCRC, DCRC, COPY_THEN_DCRC };
/* libdeflate_crc32(crc, buffer, length): zlib's convention (a finished CRC in and out, 0 to start). */
typedef uint32_t (*deflate_crc32_fn)(uint32_t, const void *, size_t);
static deflate_crc32_fn deflate_crc32;
static uint8_t *src, *dst;
static volatile uint32_t sink; /* keeps every result observable so no pass is optimised away */

static void one_pass(enum measure_kind kind) {
  if (kind != CRC) {
    memcpy(dst, src, BUFFER_BYTES);
    __asm__ volatile("" : : "r"(dst) : "memory");
  }
  if (kind == CRC) sink = crc32_slice8(0, src, BUFFER_BYTES);
  if (kind == COPY_THEN_CRC) sink = crc32_slice8(0, dst, BUFFER_BYTES);
  if (kind == ZCRC) sink = (uint32_t)crc32(0L, src, BUFFER_BYTES);
  if (kind == COPY_THEN_ZCRC) sink = (uint32_t)crc32(0L, dst, BUFFER_BYTES);
  if (kind == DCRC) sink = deflate_crc32(0, src, BUFFER_BYTES);
  if (kind == COPY_THEN_DCRC) sink = deflate_crc32(0, dst, BUFFER_BYTES);
}

/* GB/s from the median time of one pass. */
static double measure(enum measure_kind kind, double seconds, double *pass_ns, size_t *passes_done) {
  for (int i = 0; i < WARMUP_PASSES; i++) one_pass(kind);
  size_t passes = 0;
  double last = now_ns(), end = last + seconds * 1e9;
  while (passes < MAX_PASSES && last < end) {
    one_pass(kind);
    double t = now_ns();
    pass_ns[passes++] = t - last;
    last = t;
  }
  *passes_done += passes;
  sort_samples(pass_ns, passes);
  return BUFFER_BYTES / percentile(pass_ns, passes, 50);
}

int main(int argc, char **argv) {
  double seconds = arg_number(argc, argv, 1, 1.0, 0.01, 60.0);
  crc32_init();
  /* Known answer: CRC-32 of "123456789" is 0xCBF43926 (the check value of CRC-32/ISO-HDLC). */
  const uint8_t check[] = "123456789";
  if (crc32_slice8(0, check, 9) != 0xCBF43926u || crc32_bytewise(0, check, 9) != 0xCBF43926u) {
    fprintf(stderr, "memcpy-crc: the CRC-32 tables are wrong (check value mismatch)\n");
    return 1;
  }
  src = alloc_or_die(64, BUFFER_BYTES);
  dst = alloc_or_die(64, BUFFER_BYTES);
  uint64_t x = 0x9E3779B97F4A7C15ull; /* xorshift64: incompressible, deterministic contents */
  for (size_t i = 0; i < BUFFER_BYTES; i++) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    src[i] = (uint8_t)x;
  }
  memset(dst, 0, BUFFER_BYTES);
  /* Both CRC forms must agree on an unaligned tail of the real buffer too. */
  if (crc32_slice8(0, src + 3, BUFFER_BYTES - 7) != crc32_bytewise(0, src + 3, BUFFER_BYTES - 7)) {
    fprintf(stderr, "memcpy-crc: slicing-by-8 disagrees with the bytewise CRC\n");
    return 1;
  }

  double *pass_ns = alloc_or_die(64, sizeof(double) * MAX_PASSES);
  size_t passes = 0;
  if ((uint32_t)crc32(0L, src, BUFFER_BYTES) != crc32_slice8(0, src, BUFFER_BYTES)) {
    fprintf(stderr, "memcpy-crc: zlib's crc32 disagrees with slicing-by-8\n");
    return 1;
  }
  void *deflate = dlopen("libdeflate.so.0", RTLD_NOW);
  if (deflate != NULL) deflate_crc32 = (deflate_crc32_fn)dlsym(deflate, "libdeflate_crc32");
  if (deflate_crc32 != NULL && deflate_crc32(0, src, BUFFER_BYTES) != crc32_slice8(0, src, BUFFER_BYTES)) {
    fprintf(stderr, "memcpy-crc: libdeflate's crc32 disagrees with slicing-by-8\n");
    return 1;
  }
  double copy_gbps = measure(COPY, seconds / 7, pass_ns, &passes);
  double crc_gbps = measure(CRC, seconds / 7, pass_ns, &passes);
  double both_gbps = measure(COPY_THEN_CRC, seconds / 7, pass_ns, &passes);
  double zcrc_gbps = measure(ZCRC, seconds / 7, pass_ns, &passes);
  double zboth_gbps = measure(COPY_THEN_ZCRC, seconds / 7, pass_ns, &passes);
  double dcrc_gbps = deflate_crc32 != NULL ? measure(DCRC, seconds / 7, pass_ns, &passes) : 0;
  double dboth_gbps = deflate_crc32 != NULL ? measure(COPY_THEN_DCRC, seconds / 7, pass_ns, &passes) : 0;
  printf("{\"program\":\"memcpy-crc\",\"buffer_bytes\":%d,\"passes\":%zu,\"memcpy_gbps\":%.2f,\"crc32_gbps\":%.2f,"
         "\"memcpy_crc32_gbps\":%.2f,\"zlib_crc32_gbps\":%.2f,\"memcpy_zlib_crc32_gbps\":%.2f,"
         "\"libdeflate_crc32_gbps\":%.2f,\"memcpy_libdeflate_crc32_gbps\":%.2f,\"crc32_of_buffer\":\"%08x\"}\n",
         BUFFER_BYTES, passes, copy_gbps, crc_gbps, both_gbps, zcrc_gbps, zboth_gbps, dcrc_gbps, dboth_gbps,
         crc32_slice8(0, src, BUFFER_BYTES));
  if (deflate != NULL) dlclose(deflate);
  free(pass_ns);
  free(src);
  free(dst);
  return 0;
}
