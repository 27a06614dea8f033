/*
 * What every reference program shares: a monotonic clock, argument parsing, the median and
 * percentiles of a sample array, and a CPU pause for spin loops. Header-only so each program
 * stays one gcc command (bench/helpers/c-build.ts hashes this file with each program).
 */
#ifndef RIG_BNXT_BENCH_COMMON_H
#define RIG_BNXT_BENCH_COMMON_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static inline double now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/* Tells the core a spin loop is waiting (frees the sibling hyper-thread, saves power). */
static inline void cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  __asm__ volatile("yield" ::: "memory");
#endif
}

/* argv[index] as a number in [min, max], else the fallback when absent; a bad value exits. */
static double arg_number(int argc, char **argv, int index, double fallback, double min, double max) {
  if (index >= argc) return fallback;
  char *end = NULL;
  double v = strtod(argv[index], &end);
  if (end == argv[index] || *end != '\0' || v < min || v > max) {
    fprintf(stderr, "%s: argument %d (\"%s\") must be a number in [%g, %g]\n", argv[0], index, argv[index], min, max);
    exit(2);
  }
  return v;
}

static int compare_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* Sorts the samples in place; then percentile() reads them. */
static void sort_samples(double *samples, size_t count) {
  qsort(samples, count, sizeof samples[0], compare_double);
}

/* The p-th percentile (0..100) of sorted samples, nearest rank. */
static double percentile(const double *sorted, size_t count, double p) {
  if (count == 0) return 0.0 / 0.0;
  size_t rank = (size_t)((p / 100.0) * (double)count + 0.999999);
  if (rank < 1) rank = 1;
  if (rank > count) rank = count;
  return sorted[rank - 1];
}

static void *alloc_or_die(size_t alignment, size_t bytes) {
  void *p = aligned_alloc(alignment, bytes);
  if (p == NULL) {
    fprintf(stderr, "out of memory (%zu bytes)\n", bytes);
    exit(1);
  }
  return p;
}

#endif
