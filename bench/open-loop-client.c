/*
 * The open-loop load generator (see latency-client.mjs, whose `--rate` mode it replaces where a
 * C compiler is available): requests are due on a fixed schedule, one every 1/rate s, whatever
 * the server's answers do, and each one's latency counts from the time it was due. A request
 * that finds every connection busy waits, and that wait is part of its latency (no coordinated
 * omission, as in wrk2).
 *
 * Why C: at the catalog's half-peak rate (27,000 req/s and more) the Node client spends most of
 * its core on its own event loop and garbage collection, and its stalls (up to 20 ms, measured
 * against the bare ceiling server) showed up as the server's latency. One epoll loop here costs
 * a few microseconds a request.
 *
 *   open-loop-client <host> <port> <file> <seconds> <connections> <rate> <mode> <path|-> <etag|->
 *
 * `mode`: progress, enroll (`file` holds "key student" lines) or catalog (`file` holds keys;
 * `path` is requested). Keys are taken in turn from a random start, as in the wrk script. Prints
 * one line, as latency-client.mjs does: BENCH_RESULT {requests, durationUs, bytes, errors,
 * latencyUs, statuses, openLoop}. With OPEN_LOOP_TIMELINE set, it also prints to stderr the worst
 * latency of each 100 ms of due times (above 2 ms), to line stalls up with the server's.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

/* Requests still unanswered this long after the last one was due count as timeouts. */
#define DRAIN_MS 10000.0
#define MAX_EVENTS 256

enum mode { PROGRESS, ENROLL, CATALOG };

struct line {
  char *key;
  char *student;
};

struct conn {
  int fd;
  int connected;
  int busy;
  int closing; /* the server closed it: answers are framed, no new request goes out */
  double due_at;
  char *in;
  size_t in_len, in_cap;
  long end; /* -1: headers not complete; -2: chunked */
  long chunked_from;
  int status;
  char out[2048];
  size_t out_len, out_off;
};

static struct line *lines;
static size_t line_count, next_line;
static enum mode mode;
static const char *host, *port, *path, *etag;
static struct sockaddr_in address;
static int epoll_fd;
static struct conn *conns;
static int connection_count;
static int *idle;
static int idle_count;
static double *waiting;
static size_t waiting_head, waiting_tail;
static size_t max_waiting;
static double *latencies, *send_lag;
static size_t answered, lagged;
static long statuses[600];
static long errors_connect, errors_read, errors_write, errors_timeout;
static double *timeline; /* OPEN_LOOP_TIMELINE: the worst latency per 100 ms of due times */
static double timeline_start;
static const char *tiers[] = {"explorer", "builder", "innovator"};

static double now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static void fail(const char *what) {
  perror(what);
  exit(2);
}

static void read_lines(const char *file) {
  FILE *f = fopen(file, "r");
  if (f == NULL) fail(file);
  size_t cap = 1024;
  lines = malloc(cap * sizeof *lines);
  char *buffer = NULL;
  size_t size = 0;
  ssize_t n;
  while ((n = getline(&buffer, &size, f)) != -1) {
    while (n > 0 && (buffer[n - 1] == '\n' || buffer[n - 1] == '\r')) buffer[--n] = '\0';
    if (n == 0) continue;
    if (line_count == cap) lines = realloc(lines, (cap *= 2) * sizeof *lines);
    char *copy = strdup(buffer);
    char *space = strchr(copy, ' ');
    if (space != NULL) *space = '\0';
    lines[line_count].key = copy;
    lines[line_count].student = space == NULL ? NULL : space + 1;
    if (mode != CATALOG && space == NULL) {
      fprintf(stderr, "%s: line %zu is not \"key student\"\n", file, line_count + 1);
      exit(2);
    }
    line_count++;
  }
  free(buffer);
  fclose(f);
  if (line_count == 0) {
    fprintf(stderr, "%s holds no lines\n", file);
    exit(2);
  }
}

/* The next request of the scenario, as the bytes to send, into conn->out. */
static void format_request(struct conn *c) {
  struct line *l = &lines[next_line];
  next_line = (next_line + 1) % line_count;
  int n;
  if (mode == PROGRESS) {
    n = snprintf(c->out, sizeof c->out,
                 "GET /api/v1/students/%s/progress HTTP/1.1\r\nHost: %s:%s\r\nAuthorization: Bearer %s\r\n\r\n",
                 l->student, host, port, l->key);
  } else if (mode == ENROLL) {
    char body[64];
    int length = snprintf(body, sizeof body, "{\"tier\":\"%s\"}", tiers[rand() % 3]);
    n = snprintf(c->out, sizeof c->out,
                 "POST /api/v1/students/%s/enroll HTTP/1.1\r\nHost: %s:%s\r\nAuthorization: Bearer %s\r\n"
                 "Content-Type: application/json\r\nContent-Length: %d\r\n\r\n%s",
                 l->student, host, port, l->key, length, body);
  } else {
    n = snprintf(c->out, sizeof c->out, "GET %s HTTP/1.1\r\nHost: %s:%s\r\nAuthorization: Bearer %s\r\n%s%s%s\r\n",
                 path, host, port, l->key, etag == NULL ? "" : "If-None-Match: ", etag == NULL ? "" : etag,
                 etag == NULL ? "" : "\r\n");
  }
  if (n < 0 || (size_t)n >= sizeof c->out) {
    fprintf(stderr, "a request does not fit its buffer\n");
    exit(2);
  }
  c->out_len = (size_t)n;
  c->out_off = 0;
}

static void watch(struct conn *c, uint32_t events, int op) {
  struct epoll_event event = {.events = events, .data.ptr = c};
  if (epoll_ctl(epoll_fd, op, c->fd, &event) != 0) fail("epoll_ctl");
}

static void open_connection(struct conn *c) {
  c->fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (c->fd < 0) fail("socket");
  int one = 1;
  setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  c->connected = 0;
  c->busy = 0;
  c->closing = 0;
  c->in_len = 0;
  c->end = -1;
  c->out_len = c->out_off = 0;
  if (connect(c->fd, (struct sockaddr *)&address, sizeof address) != 0 && errno != EINPROGRESS) {
    errors_connect++;
  }
  watch(c, EPOLLIN | EPOLLOUT | EPOLLRDHUP, EPOLL_CTL_ADD);
}

/* Writes what is left of the request; the rest, if the socket takes less, once it is writable. */
static int flush_out(struct conn *c) {
  while (c->out_off < c->out_len) {
    ssize_t n = write(c->fd, c->out + c->out_off, c->out_len - c->out_off);
    if (n > 0) {
      c->out_off += (size_t)n;
      continue;
    }
    if (n < 0 && errno == EAGAIN) {
      watch(c, EPOLLIN | EPOLLOUT | EPOLLRDHUP, EPOLL_CTL_MOD);
      return 0;
    }
    errors_write++;
    return -1;
  }
  return 0;
}

static void send_request(struct conn *c, double due_at) {
  c->busy = 1;
  c->due_at = due_at;
  send_lag[lagged++] = now_ms() - due_at;
  format_request(c);
  flush_out(c);
}

static void give_work(struct conn *c) {
  if (c->closing) return; /* its replacement takes work once connected */
  if (waiting_head < waiting_tail) send_request(c, waiting[waiting_head++]);
  else idle[idle_count++] = (int)(c - conns);
}

static void close_connection(struct conn *c) {
  epoll_ctl(epoll_fd, EPOLL_CTL_DEL, c->fd, NULL);
  close(c->fd);
  for (int i = 0; i < idle_count; i++) {
    if (idle[i] == (int)(c - conns)) {
      idle[i] = idle[--idle_count];
      break;
    }
  }
  /* A request lost with its connection is an error; the connection is replaced. */
  if (c->busy) {
    errors_read++;
    statuses[0]++;
  }
  open_connection(c);
}

/* The value of the header `name` (with its colon, any case) in the response head, or NULL. */
static const char *header_value(const char *head, size_t length, const char *name) {
  size_t name_length = strlen(name);
  for (size_t i = 0; i + name_length < length; i++) {
    if ((i == 0 || head[i - 1] == '\n') && strncasecmp(head + i, name, name_length) == 0) {
      const char *value = head + i + name_length;
      while (*value == ' ' || *value == '\t') value++;
      return value;
    }
  }
  return NULL;
}

static long header_number(const char *head, size_t length, const char *name) {
  const char *value = header_value(head, length, name);
  return value == NULL ? -1 : strtol(value, NULL, 10);
}

static int header_has(const char *head, size_t length, const char *name, const char *expected) {
  const char *value = header_value(head, length, name);
  return value != NULL && strncasecmp(value, expected, strlen(expected)) == 0;
}

/*
 * Frames the responses read so far (one request in flight per connection): headers up to the
 * blank line, then Content-Length bytes, or chunks up to the last one, or nothing (304).
 */
static void frame(struct conn *c) {
  for (;;) {
    if (c->end == -1) {
      char *head_end = memmem(c->in, c->in_len, "\r\n\r\n", 4);
      if (head_end == NULL) return;
      size_t head_length = (size_t)(head_end - c->in);
      c->status = c->in_len >= 12 ? atoi(c->in + 9) : 0;
      /* The server closes after this answer: no request may follow it on this connection. */
      if (header_has(c->in, head_length, "connection:", "close")) c->closing = 1;
      long content_length = header_number(c->in, head_length, "content-length:");
      if (content_length >= 0) c->end = (long)head_length + 4 + content_length;
      else if (header_has(c->in, head_length, "transfer-encoding:", "chunked")) {
        c->end = -2;
        c->chunked_from = (long)head_length + 2;
      } else c->end = (long)head_length + 4;
    }
    if (c->end == -2) {
      char *last = memmem(c->in + c->chunked_from, c->in_len - (size_t)c->chunked_from, "\r\n0\r\n\r\n", 7);
      if (last == NULL) return;
      c->end = (long)(last - c->in) + 7;
    }
    if ((long)c->in_len < c->end) return;
    size_t rest = c->in_len - (size_t)c->end;
    memmove(c->in, c->in + c->end, rest);
    c->in_len = rest;
    c->end = -1;
    if (!c->busy) continue; /* nothing was asked: not ours to count */
    double latency = now_ms() - c->due_at;
    latencies[answered++] = latency;
    if (timeline != NULL) {
      size_t bucket = (size_t)((c->due_at - timeline_start) / 100);
      if (latency > timeline[bucket]) timeline[bucket] = latency;
    }
    statuses[c->status >= 0 && c->status < 600 ? c->status : 0]++;
    c->busy = 0;
    give_work(c);
    if (c->in_len == 0) return;
  }
}

static void readable(struct conn *c) {
  for (;;) {
    if (c->in_cap - c->in_len < 16384) c->in = realloc(c->in, c->in_cap = c->in_cap * 2 + 16384);
    ssize_t n = read(c->fd, c->in + c->in_len, c->in_cap - c->in_len);
    if (n > 0) {
      c->in_len += (size_t)n;
      continue;
    }
    if (n < 0 && errno == EAGAIN) break;
    /* The server closed (after a "Connection: close" answer, say): frame what came first. */
    c->closing = 1;
    frame(c);
    close_connection(c);
    return;
  }
  frame(c);
}

static int compare(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static double at(double *sorted, size_t n, double p) {
  if (n == 0) return 0;
  size_t i = (size_t)((double)n * p);
  return sorted[i < n ? i : n - 1];
}

int main(int argc, char **argv) {
  if (argc != 10) {
    fprintf(stderr, "usage: open-loop-client <host> <port> <file> <seconds> <connections> <rate> <mode> <path|-> <etag|->\n");
    return 2;
  }
  host = argv[1];
  port = argv[2];
  double seconds = atof(argv[4]);
  connection_count = atoi(argv[5]);
  double rate = atof(argv[6]);
  if (strcmp(argv[7], "progress") == 0) mode = PROGRESS;
  else if (strcmp(argv[7], "enroll") == 0) mode = ENROLL;
  else if (strcmp(argv[7], "catalog") == 0) mode = CATALOG;
  else {
    fprintf(stderr, "unknown mode %s\n", argv[7]);
    return 2;
  }
  path = strcmp(argv[8], "-") == 0 ? NULL : argv[8];
  etag = strcmp(argv[9], "-") == 0 ? NULL : argv[9];
  if (mode == CATALOG && path == NULL) {
    fprintf(stderr, "catalog mode needs a path\n");
    return 2;
  }
  if (!(rate > 0) || !(seconds > 0) || connection_count < 1) {
    fprintf(stderr, "seconds, connections and rate must be positive\n");
    return 2;
  }
  read_lines(argv[3]);
  srand((unsigned)time(NULL) ^ (unsigned)getpid());
  next_line = (size_t)rand() % line_count;

  memset(&address, 0, sizeof address);
  address.sin_family = AF_INET;
  address.sin_port = htons((uint16_t)atoi(port));
  if (inet_pton(AF_INET, host, &address.sin_addr) != 1) {
    fprintf(stderr, "host must be an IPv4 address (got %s)\n", host);
    return 2;
  }

  double interval = 1000.0 / rate;
  size_t total = (size_t)(rate * seconds);
  if (total < 1) total = 1;
  latencies = malloc(total * sizeof *latencies);
  send_lag = malloc(total * sizeof *send_lag);
  waiting = malloc(total * sizeof *waiting);
  idle = malloc((size_t)connection_count * sizeof *idle);
  conns = calloc((size_t)connection_count, sizeof *conns);
  epoll_fd = epoll_create1(EPOLL_CLOEXEC);
  if (epoll_fd < 0) fail("epoll_create1");
  for (int i = 0; i < connection_count; i++) open_connection(&conns[i]);

  struct epoll_event events[MAX_EVENTS];
  /* Give the connections a moment to open, so the first due requests find them. */
  double start = now_ms() + 100;
  if (getenv("OPEN_LOOP_TIMELINE") != NULL) {
    timeline = calloc((size_t)(seconds * 10) + 2, sizeof *timeline);
    timeline_start = start;
  }
  size_t due = 0;
  for (;;) {
    double now = now_ms();
    while (due < total && now >= start && start + (double)due * interval <= now) {
      double due_at = start + (double)due * interval;
      due++;
      if (idle_count > 0) send_request(&conns[idle[--idle_count]], due_at);
      else {
        waiting[waiting_tail++] = due_at;
        if (waiting_tail - waiting_head > max_waiting) max_waiting = waiting_tail - waiting_head;
      }
    }
    if (answered + (size_t)errors_read >= total) break;
    int timeout;
    if (due < total) {
      double wait = (now < start ? start : start + (double)due * interval) - now;
      /* epoll_wait's timeout is in whole milliseconds; closer than that, poll. */
      timeout = wait > 2 ? (int)(wait - 1.5) : 0;
    } else {
      if (now > start + (double)total * interval + DRAIN_MS) break;
      timeout = 10;
    }
    int n = epoll_wait(epoll_fd, events, MAX_EVENTS, timeout);
    for (int i = 0; i < n; i++) {
      struct conn *c = events[i].data.ptr;
      uint32_t e = events[i].events;
      if (!c->connected && (e & (EPOLLOUT | EPOLLERR | EPOLLHUP))) {
        int error = 0;
        socklen_t length = sizeof error;
        getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &error, &length);
        if (error != 0 || (e & (EPOLLERR | EPOLLHUP))) {
          if (++errors_connect > 1000 && answered == 0) {
            fprintf(stderr, "cannot connect to %s:%s\n", host, port);
            return 1;
          }
          epoll_ctl(epoll_fd, EPOLL_CTL_DEL, c->fd, NULL);
          close(c->fd);
          open_connection(c);
          continue;
        }
        c->connected = 1;
        watch(c, EPOLLIN | EPOLLRDHUP, EPOLL_CTL_MOD);
        if (!c->busy) give_work(c);
        continue;
      }
      if (e & EPOLLIN) {
        readable(c);
        continue;
      }
      if (e & (EPOLLRDHUP | EPOLLHUP | EPOLLERR)) {
        close_connection(c);
        continue;
      }
      if (e & EPOLLOUT) {
        if (flush_out(c) == 0 && c->out_off == c->out_len) watch(c, EPOLLIN | EPOLLRDHUP, EPOLL_CTL_MOD);
      }
    }
  }
  errors_timeout += (long)total - (long)answered - errors_read;

  qsort(latencies, answered, sizeof *latencies, compare);
  qsort(send_lag, lagged, sizeof *send_lag, compare);
  double sum = 0;
  for (size_t i = 0; i < answered; i++) sum += latencies[i];
  double mean = answered == 0 ? 0 : sum / (double)answered;
  printf("BENCH_RESULT {\"requests\":%zu,\"durationUs\":%.0f,\"bytes\":0,", answered, seconds * 1e6);
  printf("\"errors\":{\"connect\":%ld,\"read\":%ld,\"write\":%ld,\"status\":0,\"timeout\":%ld},", errors_connect,
         errors_read, errors_write, errors_timeout);
  printf("\"latencyUs\":{\"min\":%.0f,\"mean\":%.3f,\"max\":%.0f,\"p50\":%.0f,\"p90\":%.0f,\"p99\":%.0f,\"p999\":%.0f},",
         1000 * at(latencies, answered, 0), 1000 * mean, 1000 * at(latencies, answered, 1),
         1000 * at(latencies, answered, 0.5), 1000 * at(latencies, answered, 0.9), 1000 * at(latencies, answered, 0.99),
         1000 * at(latencies, answered, 0.999));
  printf("\"statuses\":{");
  int first = 1;
  for (int s = 0; s < 600; s++) {
    if (statuses[s] == 0) continue;
    printf("%s\"%d\":%ld", first ? "" : ",", s, statuses[s]);
    first = 0;
  }
  printf("},\"openLoop\":{\"rate\":%g,\"due\":%zu,\"maxWaiting\":%zu,\"client\":\"c\",", rate, total, max_waiting);
  printf("\"sendLagMs\":{\"p50\":%.3f,\"p99\":%.3f,\"max\":%.3f}}}\n", at(send_lag, lagged, 0.5),
         at(send_lag, lagged, 0.99), at(send_lag, lagged, 1));
  if (timeline != NULL)
    for (size_t i = 0; i < (size_t)(seconds * 10); i++)
      if (timeline[i] > 2) fprintf(stderr, "timeline %.1f s: %.1f ms\n", (double)i / 10, timeline[i]);
  return 0;
}
