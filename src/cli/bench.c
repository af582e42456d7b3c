/* SPDX-License-Identifier: Apache-2.0 */
/*
 * parkpool bench: runs the benchmark program (bench/bench.c, installed
 * as $(pkglibexecdir)/pp_bench) with the given arguments and passes its
 * exit status on. The benchmark stays a program of its own because it
 * links the peer pools it compares (APR-util, GLib, libuv), which the
 * tool has no business depending on.
 */
#include "config.h"
#include "pp_paths.h"
#include "cli.h"
#include "cli_os.h"

#include <apr_file_info.h>
#include <apr_strings.h>
#include <apr_thread_proc.h>

#include <string.h>

#define PP_BENCH_PROGRAM PP_LIBEXEC_DIR "/pp_bench"

/* Run from the build tree, the tool takes the benchmark built beside it;
 * installed, the one in PP_BENCH_PROGRAM (when this build installs one).
 * NULL when there is none. */
static const char *bench_program(const char *argv0, apr_pool_t *p)
{
    const char *tree = cli_build_tree_path(argv0, "../bench/pp_bench", p);
    apr_finfo_t fi;

    if (tree)
        return tree;
#ifdef PP_BENCH_INSTALLED
    if (apr_stat(&fi, PP_BENCH_PROGRAM, APR_FINFO_TYPE, p) == APR_SUCCESS
        && fi.filetype == APR_REG)
        return PP_BENCH_PROGRAM;
#else
    (void)fi;
#endif
    return NULL;
}

int cli_bench(int argc, const char *const *argv, apr_pool_t *p)
{
    const char *prog = bench_program(argv[0], p), *self;
    const char **args;
    apr_procattr_t *attr;
    apr_proc_t proc;
    apr_exit_why_e why;
    apr_status_t rv;
    char msg[256];
    int i, code;

    if (argc > 1 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
        printf("usage: parkpool bench [--quick] [--reps N] [--timeout SECONDS] [--out DIR]\n"
               "                      [--only POOL,POOL...] [--work W1,W6,MAIN...]\n"
               "Runs the benchmark workloads W1-W6 for parkpool and the peer pools this\n"
               "build found, and the main job (MAIN: this program hashing a tree against\n"
               "coreutils, xargs and GNU parallel), and prints the tables (see parkpool(1)). Results go to --out\n"
               "DIR (made if missing), by default $XDG_CACHE_HOME/parkpool/bench or\n"
               "~/.cache/parkpool/bench.\n");
        return CLI_OK;
    }
    if (!prog) {
        cli_error("bench: the benchmark program is not installed with this build");
        return CLI_USAGE;
    }
    /* The main job table times this very program. */
    self = cli_os_self_path(p);
    args = apr_palloc(p, (apr_size_t)(argc + 3) * sizeof(*args));
    args[0] = prog;
    for (i = 1; i < argc; i++)
        args[i] = argv[i];
    if (self) {
        args[argc++] = "--parkpool";
        args[argc++] = self;
    }
    args[argc] = NULL;
    rv = apr_procattr_create(&attr, p);
    if (rv == APR_SUCCESS)
        rv = apr_procattr_cmdtype_set(attr, APR_PROGRAM_ENV);
    if (rv == APR_SUCCESS)
        rv = apr_proc_create(&proc, prog, args, NULL, attr, p);
    if (rv != APR_SUCCESS) {
        cli_error("bench: cannot run %s: %s", prog, pp_strerror(rv, msg, sizeof(msg)));
        return CLI_USAGE;
    }
    rv = apr_proc_wait(&proc, &code, &why, APR_WAIT);
    if (rv != APR_CHILD_DONE)
        return CLI_FAILED;
    if (APR_PROC_CHECK_SIGNALED(why))
        return 128 + code;    /* as a shell reports it: 130 for Ctrl-C */
    return code;
}
