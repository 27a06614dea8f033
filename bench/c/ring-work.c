/*
 * Reference: the driver's data-path ring work done by C, so the TypeScript post/poll can be
 * compared with the same memory traffic. The main thread is the driver, as lib/bnxt/queue-pair.ts
 * posts on the default chip (BCM57608, variable WQE mode with an MSN table): it writes a 48-byte
 * SEND WQE (three 16-byte slots: 32-byte header, one SGE) into a 4096-WQE send ring and its
 * 8-byte MSN-table entry (start and next PSN, start slot) after the ring, publishes it with one
 * 64-bit doorbell store (the producer in slots) into a second memory area (the doorbell page),
 * then polls a 32-byte CQE by its toggle bit and advances its consumer. A second thread plays the
 * device: it watches the doorbell, reads each new WQE and writes its CQE, flipping the toggle bit
 * each pass (hsi.h struct dbc_dbc as bnxt_re's bnxt_qplib_ring_db builds it; the WQE and MSN
 * entry as bnxt_qplib_post_send and bnxt_qplib_fill_msn_search write them; CQE validity as
 * bnxt_qplib_poll_cq reads it).
 *
 *   send ring (4096 x 48 B) + MSN table (8192 x 8 B)   doorbell page      completion ring (4096 x 32 B)
 *   +-----+-----+-----+--   +----+----+--              +------------+     +----+----+----+--
 *   | WQE | WQE | ... |     |msn |msn |...    --->     | u64 SQ db  | --> |CQE |CQE |... |  byte 24 bit 0 = toggle
 *   +-----+-----+-----+--   +----+----+--              +------------+     +----+----+----+--
 *      driver writes                                   driver stores      device writes, driver polls
 *
 * Three measures: "sync" posts one WQE and waits for its CQE (the latency of post+poll through
 * another core); "pipelined" keeps up to WINDOW WQEs outstanding (the rate of post+poll);
 * "batch" is built the way bench/qp-post-poll.ts times the driver: POST_BATCH posts timed while
 * the device stands still, the device's work untimed (it is let run until every CQE is
 * written), then POST_BATCH polls timed; ns per post+poll is the two timed parts over the batch.
 *
 * Usage: ring-work [seconds=1]
 * Prints one JSON line: ns per post+poll, median over batches of BATCH operations.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <string.h>
#include "common.h"

/* Ring sizes are powers of two so a wrap is a mask. */
enum {
  RING_ENTRIES = 4096,
  RING_MASK = RING_ENTRIES - 1,
  WQE_SLOTS = 3,
  WQE_BYTES = WQE_SLOTS * 16,
  MSN_ENTRIES = 2 * RING_ENTRIES,
  CQE_BYTES = 32,
  WINDOW = 64,
  BATCH = 256,
  MAX_BATCHES = 1 << 18,
  WARMUP_OPS = 20000,
  POST_BATCH = 512,
};

/* 64-bit doorbell (hsi.h struct dbc_dbc): low = index | epoch << 24; high = xid | valid << 26 | type << 28. */
enum { DBC_TYPE_SQ = 0x0, DBC_VALID = 1u << 26, QP_XID = 0x45, DB_INDEX_MASK = 0xffffff };
/* CQE byte 24: bit 0 toggle, bits 1-4 cqe_type (0 = requester). */
enum { CQE_TYPE_REQ = 0, SEND_WQE_TYPE = 0x00, SEND_WQE_FLAGS_SIGNALED = 0x01, WQE_SIZE_16B = WQE_BYTES / 16 };

static uint8_t *send_ring;
static uint64_t *msn_table;
static _Atomic uint64_t *doorbell_page;
static uint8_t *completion_ring;
static atomic_bool device_stop;
/* The batch measure holds the device while the driver posts: it runs only while this is set. */
static atomic_bool device_go = true;

/* The device: turns every doorbelled WQE into a CQE. */
static void *device(void *unused) {
  (void)unused;
  uint32_t sq_cons = 0, sq_epoch = 0, cq_prod = 0, toggle = 1;
  while (!atomic_load_explicit(&device_stop, memory_order_relaxed)) {
    if (!atomic_load_explicit(&device_go, memory_order_acquire)) {
      cpu_relax();
      continue;
    }
    uint64_t db = atomic_load_explicit(doorbell_page, memory_order_acquire);
    uint32_t index = ((uint32_t)db & DB_INDEX_MASK) / WQE_SLOTS, epoch = (uint32_t)(db >> 24) & 1;
    if (index == sq_cons && epoch == sq_epoch) {
      cpu_relax();
      continue;
    }
    while (index != sq_cons || epoch != sq_epoch) {
      const uint64_t *wqe = (const uint64_t *)(send_ring + (size_t)sq_cons * WQE_BYTES);
      uint64_t *cqe = (uint64_t *)(completion_ring + (size_t)(cq_prod & RING_MASK) * CQE_BYTES);
      cqe[0] = wqe[1];                           /* the driver's tag for this WQE */
      cqe[1] = wqe[5] >> 32;                     /* bytes sent: the SGE length */
      cqe[2] = sq_cons;                          /* sq_cons_idx */
      /* The toggle word last, released: the driver reads it first. */
      atomic_store_explicit((_Atomic uint64_t *)&cqe[3], (uint64_t)(CQE_TYPE_REQ << 1 | toggle), memory_order_release);
      sq_cons = (sq_cons + 1) & RING_MASK;
      if (sq_cons == 0) sq_epoch ^= 1;
      cq_prod++;
      if ((cq_prod & RING_MASK) == 0) toggle ^= 1;
    }
  }
  return NULL;
}

/* Driver state. */
static uint32_t sq_prod, sq_epoch, cq_cons, cq_phase = 1, next_psn;
static uint64_t posted, completed;

static inline void post(uint64_t tag) {
  uint64_t *wqe = (uint64_t *)(send_ring + (size_t)(sq_prod & RING_MASK) * WQE_BYTES);
  wqe[0] = SEND_WQE_TYPE | SEND_WQE_FLAGS_SIGNALED << 8 | WQE_SIZE_16B << 16; /* type, flags, wqe_size */
  wqe[1] = tag;
  wqe[2] = 0;
  wqe[3] = 0;
  wqe[4] = 0x10000ull + (tag & 0xfff) * 64;                                    /* SGE address */
  wqe[5] = 0x1000ull | 64ull << 32;                                           /* SGE: lkey, length 64 */
  /* sq_msn_search: start PSN 0-23, next PSN 24-47, start slot 48-63; one packet per 64 B send. */
  uint32_t start = next_psn;
  next_psn = (next_psn + 1) & 0xffffff;
  msn_table[tag & (MSN_ENTRIES - 1)] =
      start | (uint64_t)next_psn << 24 | (uint64_t)((sq_prod & RING_MASK) * WQE_SLOTS) << 48;
  sq_prod = (sq_prod + 1) & RING_MASK;
  if (sq_prod == 0) sq_epoch ^= 1;
  uint64_t high = QP_XID | DBC_VALID | (uint32_t)DBC_TYPE_SQ << 28;
  atomic_store_explicit(doorbell_page, high << 32 | (uint64_t)sq_epoch << 24 | sq_prod * WQE_SLOTS,
                        memory_order_release);
}

/* One look at the next CQE: 1 if it was there (and is the expected one), else 0. */
static inline int poll_one(uint64_t expected_tag) {
  uint64_t *cqe = (uint64_t *)(completion_ring + (size_t)(cq_cons & RING_MASK) * CQE_BYTES);
  uint64_t type_toggle = atomic_load_explicit((_Atomic uint64_t *)&cqe[3], memory_order_acquire);
  if ((type_toggle & 1) != cq_phase) return 0;
  if (cqe[0] != expected_tag || ((type_toggle >> 1) & 0xf) != CQE_TYPE_REQ) {
    fprintf(stderr, "ring-work: CQE %u names tag %llu, expected %llu\n", cq_cons, (unsigned long long)cqe[0],
            (unsigned long long)expected_tag);
    exit(1);
  }
  cq_cons++;
  if ((cq_cons & RING_MASK) == 0) cq_phase ^= 1;
  return 1;
}

/* Completes `ops` more operations keeping at most `window` outstanding. */
static void run_ops(uint64_t ops, uint64_t window) {
  uint64_t target = completed + ops;
  while (completed < target) {
    while (posted - completed < window) post(posted++);
    if (poll_one(completed)) completed++;
    else cpu_relax();
  }
}

static void drain(void) {
  while (completed < posted) {
    if (poll_one(completed)) completed++;
    else cpu_relax();
  }
}

/* ns per operation, median over batches, for `seconds` of work at the given window. */
static double measure(double seconds, uint64_t window, double *batch_ns, uint64_t *ops_done) {
  run_ops(WARMUP_OPS, window);
  size_t batches = 0;
  double last = now_ns(), end = last + seconds * 1e9;
  while (batches < MAX_BATCHES && last < end) {
    run_ops(BATCH, window);
    double t = now_ns();
    batch_ns[batches++] = (t - last) / BATCH;
    last = t;
  }
  drain();
  *ops_done += (uint64_t)batches * BATCH;
  sort_samples(batch_ns, batches);
  return percentile(batch_ns, batches, 50);
}

/* True once the CQE `ahead` past the consumer is written (the device's work for a batch is done). */
static inline int ready_ahead(uint32_t ahead) {
  uint32_t at = cq_cons + ahead;
  uint32_t phase = ((at & RING_MASK) < (cq_cons & RING_MASK)) ? cq_phase ^ 1 : cq_phase;
  uint64_t *cqe = (uint64_t *)(completion_ring + (size_t)(at & RING_MASK) * CQE_BYTES);
  return (atomic_load_explicit((_Atomic uint64_t *)&cqe[3], memory_order_acquire) & 1) == phase;
}

/* One batch as qp-post-poll times it: ns per post+poll of the timed parts (posts, polls). */
static double one_batch(void) {
  atomic_store_explicit(&device_go, false, memory_order_release);
  double t0 = now_ns();
  for (int i = 0; i < POST_BATCH; i++) post(posted++);
  double t1 = now_ns();
  atomic_store_explicit(&device_go, true, memory_order_release);
  while (!ready_ahead(POST_BATCH - 1)) cpu_relax();
  double t2 = now_ns();
  for (int i = 0; i < POST_BATCH; i++) {
    if (!poll_one(completed)) {
      fprintf(stderr, "ring-work: CQE %u not there after the batch\n", cq_cons);
      exit(1);
    }
    completed++;
  }
  double t3 = now_ns();
  return (t1 - t0 + (t3 - t2)) / POST_BATCH;
}

static double measure_batches(double seconds, double *batch_ns) {
  for (int i = 0; i < WARMUP_OPS / POST_BATCH; i++) one_batch();
  size_t batches = 0;
  double end = now_ns() + seconds * 1e9;
  while (batches < MAX_BATCHES && now_ns() < end) batch_ns[batches++] = one_batch();
  sort_samples(batch_ns, batches);
  return percentile(batch_ns, batches, 50);
}

int main(int argc, char **argv) {
  double seconds = arg_number(argc, argv, 1, 1.0, 0.01, 60.0);
  send_ring = alloc_or_die(4096, (size_t)RING_ENTRIES * WQE_BYTES + (size_t)MSN_ENTRIES * 8);
  msn_table = (uint64_t *)(send_ring + (size_t)RING_ENTRIES * WQE_BYTES);
  doorbell_page = alloc_or_die(4096, 4096);
  completion_ring = alloc_or_die(4096, (size_t)RING_ENTRIES * CQE_BYTES);
  memset(send_ring, 0, (size_t)RING_ENTRIES * WQE_BYTES + (size_t)MSN_ENTRIES * 8);
  memset(completion_ring, 0, (size_t)RING_ENTRIES * CQE_BYTES); /* toggle 0: nothing valid yet */
  atomic_init(doorbell_page, 0);

  pthread_t thread;
  if (pthread_create(&thread, NULL, device, NULL) != 0) {
    fprintf(stderr, "ring-work: cannot start the device thread\n");
    return 1;
  }
  double *batch_ns = alloc_or_die(64, sizeof(double) * MAX_BATCHES);
  uint64_t ops = 0;
  double sync_ns = measure(seconds / 3, 1, batch_ns, &ops);
  double pipelined_ns = measure(seconds / 3, WINDOW, batch_ns, &ops);
  double batch_post_poll_ns = measure_batches(seconds / 3, batch_ns);
  atomic_store_explicit(&device_stop, true, memory_order_relaxed);
  pthread_join(thread, NULL);

  printf("{\"program\":\"ring-work\",\"ring_entries\":%d,\"wqe_bytes\":%d,\"cqe_bytes\":%d,\"window\":%d,\"ops\":%llu,"
         "\"ns_sync_median\":%.1f,\"ns_pipelined_median\":%.1f,\"ns_batch_median\":%.1f}\n",
         RING_ENTRIES, WQE_BYTES, CQE_BYTES, WINDOW, (unsigned long long)ops, sync_ns, pipelined_ns,
         batch_post_poll_ns);
  free(batch_ns);
  free(send_ring);
  free(doorbell_page);
  free(completion_ring);
  return 0;
}
