/*
 * Reference: a raw UDP ping-pong over 127.0.0.1 between two processes, what the kernel's
 * loopback costs per round trip. A software NIC cabled through a UDP tunnel (emu:LOCAL:REMOTE)
 * pays at least this per RoCE request/answer.
 *
 * Two sockets bound to 127.0.0.1 on ports the kernel picks and connected to each other; then
 * fork: the child echoes every datagram, the parent sends one and blocks for the echo.
 *
 * Usage: udp-ping [seconds=1] [payload_bytes=64]
 * Prints one JSON line: us per round trip (median, p99, mean).
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>
#include "common.h"

enum { MAX_PAYLOAD = 9000, MAX_TRIPS = 1 << 20, WARMUP_TRIPS = 2000 };
static const char STOP_BYTE = 'q';

static int bound_socket(struct sockaddr_in *addr) {
  int fd = socket(AF_INET, SOCK_DGRAM, 0);
  if (fd < 0) {
    perror("udp-ping: socket");
    exit(1);
  }
  memset(addr, 0, sizeof *addr);
  addr->sin_family = AF_INET;
  addr->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof *addr;
  if (bind(fd, (struct sockaddr *)addr, sizeof *addr) != 0 || getsockname(fd, (struct sockaddr *)addr, &len) != 0) {
    perror("udp-ping: bind");
    exit(1);
  }
  return fd;
}

/* Every wait is bounded: a peer that vanished ends the program instead of hanging it. */
static void receive_timeout(int fd, int seconds) {
  struct timeval tv = { .tv_sec = seconds, .tv_usec = 0 };
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
}

static void echo(int fd) {
  static char buf[MAX_PAYLOAD];
  receive_timeout(fd, 5);
  for (;;) {
    ssize_t n = recv(fd, buf, sizeof buf, 0);
    if (n <= 0 || (n == 1 && buf[0] == STOP_BYTE)) _exit(0);
    if (send(fd, buf, (size_t)n, 0) != n) _exit(1);
  }
}

static char ping_buf[MAX_PAYLOAD];

static int round_trip(int fd, size_t payload) {
  if (send(fd, ping_buf, payload, 0) != (ssize_t)payload) return -1;
  return recv(fd, ping_buf, sizeof ping_buf, 0) == (ssize_t)payload ? 0 : -1;
}

int main(int argc, char **argv) {
  double seconds = arg_number(argc, argv, 1, 1.0, 0.01, 60.0);
  size_t payload = (size_t)arg_number(argc, argv, 2, 64, 2, MAX_PAYLOAD);
  struct sockaddr_in ping_addr, pong_addr;
  int ping_fd = bound_socket(&ping_addr);
  int pong_fd = bound_socket(&pong_addr);
  if (connect(ping_fd, (struct sockaddr *)&pong_addr, sizeof pong_addr) != 0 ||
      connect(pong_fd, (struct sockaddr *)&ping_addr, sizeof ping_addr) != 0) {
    perror("udp-ping: connect");
    return 1;
  }
  pid_t child = fork();
  if (child < 0) {
    perror("udp-ping: fork");
    return 1;
  }
  if (child == 0) {
    close(ping_fd);
    echo(pong_fd);
  }
  close(pong_fd);
  receive_timeout(ping_fd, 1);
  memset(ping_buf, 0xa5, sizeof ping_buf);

  double *trip_us = alloc_or_die(64, sizeof(double) * MAX_TRIPS);
  int failed = 0;
  for (int i = 0; i < WARMUP_TRIPS && !failed; i++) failed = round_trip(ping_fd, payload);
  size_t trips = 0;
  double start = now_ns(), last = start, end = start + seconds * 1e9;
  while (!failed && trips < MAX_TRIPS && last < end) {
    failed = round_trip(ping_fd, payload);
    double t = now_ns();
    trip_us[trips++] = (t - last) / 1e3;
    last = t;
  }
  send(ping_fd, &STOP_BYTE, 1, 0);
  int status = 0;
  if (waitpid(child, &status, 0) != child) kill(child, SIGKILL);
  if (failed) {
    fprintf(stderr, "udp-ping: a datagram was lost or its echo did not come within 1 s\n");
    return 1;
  }
  double mean = (last - start) / 1e3 / (double)trips;
  sort_samples(trip_us, trips);
  printf("{\"program\":\"udp-ping\",\"payload_bytes\":%zu,\"round_trips\":%zu,"
         "\"us_median\":%.2f,\"us_p99\":%.2f,\"us_mean\":%.2f}\n",
         payload, trips, percentile(trip_us, trips, 50), percentile(trip_us, trips, 99), mean);
  free(trip_us);
  close(ping_fd);
  return 0;
}
