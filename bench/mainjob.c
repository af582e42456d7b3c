/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The main job table of pp_bench: `parkpool run` hashing a tree of files
 * beside the tools a user would reach for instead, in one run, on a tree
 * made here so that any machine can run it (NFILES files of mixed sizes,
 * about TREE_BYTES in all, written once from a fixed-seed generator, read
 * once before timing so that the page cache is warm):
 *
 *   parkpool   parkpool run -j 2 -q -0 --type hash.ALGO -f LIST
 *   ALGOsum    xargs -0 ALGOsum < LIST            (one process at a time)
 *   xargs -P2  xargs -0 -P 2 -n 64 ALGOsum < LIST
 *   parallel   parallel -0 -j 2 -X ALGOsum < LIST (GNU parallel, if installed)
 *
 * for sha256, sha1 and md5; wall seconds, median of --reps, each command a
 * child of its own (wait4 gives its peak RSS); and the peak RSS of
 * parkpool streaming 200,000 lines, with -k and without. Output goes to
 * /dev/null: the tools write the same lines, which tests/sh/hash.sh checks.
 */
#include "config.h"
#include "mainjob.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define NFILES      20000
#define TREE_BYTES  (1000ull << 20)
#define STREAM      200000
#define NTOOLS      4

static const char *const algos[] = { "sha256", "sha1", "md5" };
static const char *const tool_names[NTOOLS] = { "parkpool", "ALGOsum", "xargs -P2", "parallel" };

static double now_s(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Run cmd with /bin/sh: its wall seconds (and peak RSS in KiB), or -1 if it
 * failed. */
static double run_cmd(const char *cmd, long *maxrss_kb)
{
    struct rusage ru;
    double start = now_s();
    pid_t pid = fork();
    int status;

    if (pid < 0)
        return -1;
    if (pid == 0) {
        execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
        _exit(127);
    }
    if (wait4(pid, &status, 0, &ru) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
        return -1;
    if (maxrss_kb)
        *maxrss_kb = ru.ru_maxrss;
    return now_s() - start;
}

/* A file's size: most small, some middling, a few large, as a source
 * tree or a home folder has them; the mean is near TREE_BYTES / NFILES. */
static size_t file_size(unsigned long long *seed)
{
    unsigned long long r;

    *seed ^= *seed << 13;
    *seed ^= *seed >> 7;
    *seed ^= *seed << 17;
    r = *seed;
    if (r % 100 < 80)
        return (size_t)(r >> 8) % (16 << 10);
    if (r % 100 < 99)
        return (16 << 10) + (size_t)(r >> 8) % (112 << 10);
    return (1 << 20) + (size_t)(r >> 8) % (4 << 20);
}

/* The tree, in dir, and LIST (NUL-separated names) beside it. */
static int make_tree(const char *dir, int nfiles, unsigned long long *bytes)
{
    static char block[1 << 16];
    unsigned long long seed = 0x9e3779b97f4a7c15ull;
    char path[4096];
    FILE *list;
    size_t i;
    int n;

    for (i = 0; i < sizeof(block); i++)
        block[i] = (char)(i * 2654435761u >> 13);
    snprintf(path, sizeof(path), "%s/LIST", dir);
    if (!(list = fopen(path, "w")))
        return -1;
    *bytes = 0;
    for (n = 0; n < nfiles; n++) {
        size_t size = file_size(&seed), left;
        int fd;

        snprintf(path, sizeof(path), "%s/d%02d", dir, n % 50);
        mkdir(path, 0777);
        snprintf(path, sizeof(path), "%s/d%02d/f%05d", dir, n % 50, n);
        fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fd < 0) {
            fclose(list);
            return -1;
        }
        block[0] = (char)n;    /* no two files alike */
        for (left = size; left > 0;) {
            size_t piece = left < sizeof(block) ? left : sizeof(block);
            if (write(fd, block, piece) != (ssize_t)piece) {
                close(fd);
                fclose(list);
                return -1;
            }
            left -= piece;
        }
        close(fd);
        *bytes += size;
        fprintf(list, "%s", path);
        fputc('\0', list);
    }
    return fclose(list) == 0 ? 0 : -1;
}

static int have_gnu_parallel(void)
{
    return run_cmd("parallel --version 2>/dev/null | grep -q 'GNU parallel'", NULL) >= 0;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return x < y ? -1 : x > y;
}

static void command(char *out, size_t size, int tool, const char *algo, const char *dir,
                    const char *parkpool)
{
    switch (tool) {
    case 0:
        snprintf(out, size, "'%s' run -j 2 -q -0 --type hash.%s -f '%s/LIST' > /dev/null",
                 parkpool, algo, dir);
        break;
    case 1:
        snprintf(out, size, "xargs -0 %ssum < '%s/LIST' > /dev/null", algo, dir);
        break;
    case 2:
        snprintf(out, size, "xargs -0 -P 2 -n 64 %ssum < '%s/LIST' > /dev/null", algo, dir);
        break;
    default:
        snprintf(out, size, "parallel --will-cite -0 -j 2 -X %ssum < '%s/LIST' > /dev/null",
                 algo, dir);
    }
}

int pp_bench_main_job(const char *parkpool, unsigned reps, int quick)
{
    char dir[] = "/tmp/pp_bench_tree_XXXXXX", cmd[8192];
    int nfiles = quick ? NFILES / 10 : NFILES, a, tool, par = have_gnu_parallel();
    unsigned long long bytes;
    double fig[3][NTOOLS];
    long rss_plain = -1, rss_k = -1;
    unsigned r;

    if (!mkdtemp(dir)) {
        fprintf(stderr, "pp_bench: cannot make a folder for the main job's tree: %s\n",
                strerror(errno));
        return -1;
    }
    printf("\nmain job: making %d files in %s ...\n", nfiles, dir);
    fflush(stdout);
    if (make_tree(dir, nfiles, &bytes) != 0) {
        fprintf(stderr, "pp_bench: cannot write the main job's tree in %s: %s\n", dir,
                strerror(errno));
        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
        run_cmd(cmd, NULL);
        return -1;
    }
    snprintf(cmd, sizeof(cmd), "xargs -0 cat < '%s/LIST' > /dev/null", dir);
    run_cmd(cmd, NULL);    /* the page cache, warm for every tool alike */
    for (a = 0; a < 3; a++) {
        for (tool = 0; tool < NTOOLS; tool++) {
            double runs[99];
            unsigned ok = 0;

            fig[a][tool] = -1;
            if (tool == 3 && !par)
                continue;
            command(cmd, sizeof(cmd), tool, algos[a], dir, parkpool);
            for (r = 0; r < reps; r++) {
                double t = run_cmd(cmd, NULL);
                if (t >= 0)
                    runs[ok++] = t;
            }
            if (ok == reps) {
                qsort(runs, ok, sizeof(runs[0]), cmp_double);
                fig[a][tool] = runs[ok / 2];
            }
        }
    }
    /* A 200,000-line stream of small tasks: memory stays flat. */
    snprintf(cmd, sizeof(cmd), "head -c $((%d * 18)) /dev/zero | tr '\\0' x | fold -w 17"
             " | sed 's|.*|/etc/hostname|' | '%s' run -j 2 -q --type hash.sha1 -f - > /dev/null",
             STREAM, parkpool);
    run_cmd(cmd, &rss_plain);
    snprintf(cmd, sizeof(cmd), "head -c $((%d * 18)) /dev/zero | tr '\\0' x | fold -w 17"
             " | sed 's|.*|/etc/hostname|' | '%s' run -j 2 -q -k --type hash.sha1 -f - > /dev/null",
             STREAM, parkpool);
    run_cmd(cmd, &rss_k);

    printf("main job: %d files, %.2f GB, page cache warm; wall seconds, median of %u;"
           " 2 workers or processes\n", nfiles, bytes / 1e9, reps);
    printf("%-8s", "hash");
    for (tool = 0; tool < NTOOLS; tool++)
        printf(" %10s", tool_names[tool]);
    printf(" %10s %10s %10s\n", "pp/sum", "pp/xargs", "pp/par");
    for (a = 0; a < 3; a++) {
        printf("%-8s", algos[a]);
        for (tool = 0; tool < NTOOLS; tool++) {
            if (fig[a][tool] < 0)
                printf(" %10s", tool == 3 && !par ? "-" : "failed");
            else
                printf(" %10.2f", fig[a][tool]);
        }
        for (tool = 1; tool < NTOOLS; tool++) {
            if (fig[a][0] > 0 && fig[a][tool] > 0)
                printf(" %10.2f", fig[a][0] / fig[a][tool]);
            else
                printf(" %10s", "-");
        }
        printf("\n");
    }
    if (!par)
        printf("(GNU parallel not installed: apt-get install parallel)\n");
    printf("main job: a stream of %d lines (hash.sha1): max RSS %.1f MiB, with -k %.1f MiB\n",
           STREAM, rss_plain / 1024.0, rss_k / 1024.0);
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    run_cmd(cmd, NULL);
    for (a = 0; a < 3; a++)
        if (fig[a][0] < 0)
            return -1;
    return rss_plain > 0 && rss_k > 0 ? 0 : -1;
}
