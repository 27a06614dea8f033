/*
 * Reference: the fastest a request/answer between two threads can be on this machine.
 * A raw shared-memory ping-pong, one 64-byte cache line each way: the pinger stores a
 * sequence number in its line, the ponger spins until it sees it and stores it back in the
 * other line. Every request/answer the driver makes to the software NIC's worker thread
 * (HWRM, CMDQ, a 64 B send) costs at least this.
 *
 * Usage: shm-ping [seconds=1]
 * Prints one JSON line: ns per round trip (mean, and median / p99 over batches of BATCH trips).
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdatomic.h>
#include "common.h"

enum { BATCH = 32, MAX_BATCHES = 1 << 20, WARMUP_TRIPS = 100000 };
static const uint64_t STOP = UINT64_MAX;

/* Each direction owns one cache line so the only traffic is the line moving between cores. */
struct line {
  _Alignas(64) _Atomic uint64_t seq;
  char pad[64 - sizeof(uint64_t)];
};
static struct line ping_line, pong_line;

static void *ponger(void *unused) {
  (void)unused;
  uint64_t seen = 0;
  for (;;) {
    uint64_t v = atomic_load_explicit(&ping_line.seq, memory_order_acquire);
    if (v == seen) {
      cpu_relax();
      continue;
    }
    if (v == STOP) return NULL;
    seen = v;
    atomic_store_explicit(&pong_line.seq, v, memory_order_release);
  }
}

static uint64_t next_seq = 1;

static inline void round_trip(void) {
  uint64_t s = next_seq++;
  atomic_store_explicit(&ping_line.seq, s, memory_order_release);
  while (atomic_load_explicit(&pong_line.seq, memory_order_acquire) != s) cpu_relax();
}

int main(int argc, char **argv) {
  double seconds = arg_number(argc, argv, 1, 1.0, 0.01, 60.0);
  pthread_t thread;
  if (pthread_create(&thread, NULL, ponger, NULL) != 0) {
    fprintf(stderr, "shm-ping: cannot start the ponger thread\n");
    return 1;
  }
  for (int i = 0; i < WARMUP_TRIPS; i++) round_trip();

  double *batch_ns = alloc_or_die(64, sizeof(double) * MAX_BATCHES);
  size_t batches = 0;
  double start = now_ns(), last = start, end = start + seconds * 1e9;
  while (batches < MAX_BATCHES && last < end) {
    for (int i = 0; i < BATCH; i++) round_trip();
    double t = now_ns();
    batch_ns[batches++] = (t - last) / BATCH;
    last = t;
  }
  atomic_store_explicit(&ping_line.seq, STOP, memory_order_release);
  pthread_join(thread, NULL);

  double mean = (last - start) / (double)(batches * BATCH);
  sort_samples(batch_ns, batches);
  printf("{\"program\":\"shm-ping\",\"round_trips\":%zu,\"batch\":%d,"
         "\"ns_mean\":%.1f,\"ns_median\":%.1f,\"ns_p99\":%.1f}\n",
         batches * BATCH, BATCH, mean, percentile(batch_ns, batches, 50), percentile(batch_ns, batches, 99));
  free(batch_ns);
  return 0;
}
