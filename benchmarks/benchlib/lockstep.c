/* N lock-step clients on a Unix socket (agent_bench.py figures 5 and 6), one thread each: write
 * one acquireTokenSilent line, read its reply, repeat, for a number of seconds. A refusal
 * (a reply with id null: tooManyConnections) or a closed connection: connect again 100 ms later,
 * as a well-behaved client would. C, so the clients' own scheduling (Python's lock) does not
 * show up in the agent's latencies.
 *
 *   cc -O2 -pthread -o lockstep lockstep.c && ./lockstep SOCKET CLIENTS SECONDS
 *
 * Prints one JSON line: replies, p50/p99/max (microseconds), starved clients, refusals, errors. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

static const char *path;
static double until;

struct client {
    pthread_t thread;
    long *latencies; /* microseconds */
    long count, capacity, refusals, errors;
};

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}

static int connect_to(void) {
    int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    struct sockaddr_un address = {.sun_family = AF_UNIX};
    strncpy(address.sun_path, path, sizeof address.sun_path - 1);
    if (fd < 0 || connect(fd, (struct sockaddr *)&address, sizeof address) != 0) {
        if (fd >= 0) close(fd);
        return -1;
    }
    return fd;
}

/* One reply line into `line` (the rest of what came stays in `buffer`); 0 at end of stream. */
static int read_line(int fd, char *buffer, size_t *held, char *line, size_t size) {
    for (;;) {
        char *end = memchr(buffer, '\n', *held);
        if (end) {
            size_t length = end - buffer + 1;
            size_t copied = length < size ? length : size - 1;
            memcpy(line, buffer, copied);
            line[copied] = 0;
            memmove(buffer, end + 1, *held - length);
            *held -= length;
            return 1;
        }
        if (*held == 65536) return 0;
        ssize_t got = read(fd, buffer + *held, 65536 - *held);
        if (got <= 0) return 0;
        *held += got;
    }
}

static void *run(void *argument) {
    struct client *c = argument;
    char *buffer = malloc(65536), line[8192], request[256];
    long id = 0;
    while (now() < until) {
        int fd = connect_to();
        size_t held = 0;
        if (fd < 0) {
            c->errors++;
        } else {
            while (now() < until) {
                int length = snprintf(request, sizeof request,
                    "{\"jsonrpc\":\"2.0\",\"id\":%ld,\"method\":\"acquireTokenSilent\",\"params\":{\"scopes\":[\"User.Read\"]}}\n", ++id);
                double start = now();
                if (send(fd, request, length, MSG_NOSIGNAL) != length || !read_line(fd, buffer, &held, line, sizeof line)) break;
                long elapsed = (long)((now() - start) * 1e6);
                if (strstr(line, "\"result\"")) {
                    if (c->count == c->capacity) {
                        c->capacity = c->capacity ? c->capacity * 2 : 4096;
                        c->latencies = realloc(c->latencies, c->capacity * sizeof(long));
                    }
                    c->latencies[c->count++] = elapsed;
                } else if (strstr(line, "\"id\":null")) {
                    c->refusals++;
                    break;
                } else {
                    c->errors++;
                }
            }
            close(fd);
        }
        if (now() < until) usleep(100000);
    }
    free(buffer);
    return NULL;
}

static int compare(const void *a, const void *b) {
    long x = *(const long *)a, y = *(const long *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv) {
    if (argc != 4) {
        fprintf(stderr, "usage: lockstep SOCKET CLIENTS SECONDS\n");
        return 2;
    }
    path = argv[1];
    int clients = atoi(argv[2]);
    double seconds = atof(argv[3]);
    struct client *all = calloc(clients, sizeof *all);
    until = now() + seconds;
    for (int i = 0; i < clients; i++) pthread_create(&all[i].thread, NULL, run, &all[i]);
    long total = 0, refusals = 0, errors = 0, starved = 0;
    for (int i = 0; i < clients; i++) {
        pthread_join(all[i].thread, NULL);
        total += all[i].count;
        refusals += all[i].refusals;
        errors += all[i].errors;
        starved += all[i].count == 0;
    }
    long *merged = malloc((total ? total : 1) * sizeof(long)), at = 0;
    for (int i = 0; i < clients; i++) {
        memcpy(merged + at, all[i].latencies, all[i].count * sizeof(long));
        at += all[i].count;
    }
    qsort(merged, total, sizeof(long), compare);
    long p50 = total ? merged[(long)(0.50 * (total - 1) + 0.5)] : 0;
    long p99 = total ? merged[(long)(0.99 * (total - 1) + 0.5)] : 0;
    long max = total ? merged[total - 1] : 0;
    printf("{\"replies\":%ld,\"seconds\":%g,\"p50_us\":%ld,\"p99_us\":%ld,\"max_us\":%ld,\"starved\":%ld,"
           "\"refusals\":%ld,\"errors\":%ld}\n", total, seconds, p50, p99, max, starved, refusals, errors);
    return 0;
}
