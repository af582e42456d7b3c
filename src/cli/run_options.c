/* SPDX-License-Identifier: Apache-2.0 */
/* parkpool run's options: the table (with each option's help line), the
 * help, and the parse into run_opts (run.h). */
#include "config.h"
#include "run.h"
#include "cli_os.h"

#include <apr_strings.h>

#include <stdlib.h>
#include <string.h>

enum {
    OPT_PROGRESS = 256, OPT_NO_PROGRESS, OPT_JSON, OPT_CHECK, OPT_JOBLOG, OPT_TIMEOUT,
    OPT_RETRIES, OPT_HALT, OPT_DRY_RUN, OPT_BAR, OPT_ETA
};

/* The options, with their help: "ARG\tline" when the option takes ARG. */
static const apr_getopt_option_t run_options[] = {
    { "type", 'T', 1, "TYPE\tevery record or word is one argument of TYPE" },
    { "file", 'f', 1, "FILE\tread records from FILE ('-': standard input)" },
    { "null", '0', 0, "\trecords end in NUL, not newline (find -print0)" },
    { "check", OPT_CHECK, 0, "\tread and check all input first; run nothing if a record is bad" },
    { "jobs", 'j', 1, "N\tN worker threads (default: one per CPU)" },
    { "keep-order", 'k', 0, "\tprint results in input order" },
    { "plugin-dir", 'P', 1, "DIR\tload plugins from DIR first (repeatable)" },
    { "timeout", OPT_TIMEOUT, 1, "SECONDS\tcancel a task running longer (it fails, timed out)" },
    { "retries", OPT_RETRIES, 1, "N\trun a failed task up to N more times" },
    { "halt", OPT_HALT, 1, "WHEN,fail=N\tafter N failures stop: now (cancel) or soon (finish running)" },
    { "joblog", OPT_JOBLOG, 1, "FILE\twrite GNU parallel's job log to FILE" },
    { "json", OPT_JSON, 0, "\tJSON Lines on stdout: an object per task, the summary last" },
    { "dry-run", OPT_DRY_RUN, 0, "\tprint the tasks that would run, run none" },
    { "verbose", 'v', 0, "\tprint each task on stderr as it starts" },
    { "progress", OPT_PROGRESS, 0, "\tshow the progress bar (default: when stderr is a terminal)" },
    { "bar", OPT_BAR, 0, "\tthe same as --progress" },
    { "eta", OPT_ETA, 0, "\tthe same as --progress (the bar shows the ETA)" },
    { "no-progress", OPT_NO_PROGRESS, 0, "\tnever show it" },
    { "quiet", 'q', 0, "\tno summary" },
    { "help", 'h', 0, "\tthis help" },
    { NULL, 0, 0, NULL }
};

static void run_help(void)
{
    const apr_getopt_option_t *o;

    printf("usage: parkpool run [OPTION]... TYPE ARG...\n"
           "       parkpool run [OPTION]... --type TYPE [ARG...]\n"
           "       parkpool run [OPTION]... [--type TYPE] -f FILE|-\n"
           "\n"
           "Run tasks on a pool: TYPE once per ARG, or one 'TYPE ARG' record per line of\n"
           "FILE (with --type, each line is one ARG). --type without ARG or -f reads\n"
           "standard input.\n\n");
    for (o = run_options; o->name; o++) {
        const char *tab = strchr(o->description, '\t');
        char head[64];
        int arglen = (int)(tab - o->description);

        if (o->optch < 256)
            apr_snprintf(head, sizeof(head), "-%c, --%s%s%.*s", o->optch, o->name,
                         arglen ? " " : "", arglen, o->description);
        else
            apr_snprintf(head, sizeof(head), "    --%s%s%.*s", o->name, arglen ? " " : "",
                         arglen, o->description);
        printf("  %-24s %s\n", head, tab + 1);
    }
    printf("\nExit status: 0 all tasks succeeded, 1 some failed or a write failed, 2 bad\n"
           "usage or input, 130 interrupted. See parkpool(1).\n");
}

/* apr_getopt takes a lone "-" (standard input, by convention a word) for
 * a bad option: it gets a stand-in, recognised by its address. */
static const char dash[] = "-";

static const char *const *hide_dashes(int argc, const char *const *argv, apr_pool_t *p)
{
    const char **copy = apr_pmemdup(p, argv, (apr_size_t)(argc + 1) * sizeof(*argv));
    static const char stand_in[] = "\x1f";
    int i;

    for (i = 1; i < argc && strcmp(argv[i], "--") != 0; i++)
        if (strcmp(argv[i], "-") == 0)
            copy[i] = stand_in;
    return copy;
}

static const char *shown(const char *word)
{
    return word[0] == '\x1f' && word[1] == '\0' ? dash : word;
}

/* --halt WHEN,fail=N, GNU parallel's form; "never" turns it off. */
static int parse_halt(run_opts *o, const char *v)
{
    char *end;

    if (strcmp(v, "never") == 0) {
        o->halt_fail = 0;
        return 0;
    }
    if (strncmp(v, "now,fail=", 9) == 0)
        o->halt_now = 1;
    else if (strncmp(v, "soon,fail=", 10) == 0)
        o->halt_now = 0;
    else
        return -1;
    v = strchr(v, '=') + 1;
    o->halt_fail = strtol(v, &end, 10);
    return end == v || *end || o->halt_fail < 1 ? -1 : 0;
}

/* Parse the command line into o: -1 to go on, else the exit status. */
int run_parse_options(run_opts *o, int argc, const char *const *argv, apr_pool_t *p)
{
    const char *optval, **words;
    apr_getopt_t *os;
    apr_status_t rv;
    char *end;
    int opt, i;

    memset(o, 0, sizeof(*o));
    o->dirs = apr_array_make(p, 4, sizeof(const char *));
    o->progress = cli_os_stderr_is_terminal();
    o->sep = '\n';
    argv = hide_dashes(argc, argv, p);
    rv = apr_getopt_init(&os, p, argc, argv);
    if (rv != APR_SUCCESS) {
        cli_error("run: cannot read the options");
        return CLI_USAGE;
    }
    os->errfn = NULL;
    os->interleave = 1;    /* options may follow the tasks; "--" ends them */
    while ((rv = apr_getopt_long(os, run_options, &opt, &optval)) == APR_SUCCESS) {
        switch (opt) {
        case 'P': APR_ARRAY_PUSH(o->dirs, const char *) = optval; break;
        case 'j':
            o->jobs = strtol(optval, &end, 10);
            if (end == optval || *end || o->jobs < 1 || o->jobs > 4096) {
                cli_error("run: -j takes a number of workers from 1 to 4096, not '%s'", optval);
                return CLI_USAGE;
            }
            break;
        case 'k': o->keep_order = 1; break;
        case 'f': o->file = shown(optval); break;
        case 'T': o->type = optval; break;
        case '0': o->sep = '\0'; break;
        case 'q': o->quiet = 1; break;
        case OPT_CHECK: o->check = 1; break;
        case OPT_PROGRESS: case OPT_BAR: case OPT_ETA: o->progress = 1; break;
        case OPT_JOBLOG: o->joblog = shown(optval); break;
        case OPT_DRY_RUN: o->dry_run = 1; break;
        case 'v': o->verbose = 1; break;
        case OPT_TIMEOUT: {
            double secs = strtod(optval, &end);
            if (end == optval || *end || !(secs > 0) || secs > 1e6) {
                cli_error("run: --timeout takes seconds above 0, not '%s'", optval);
                return CLI_USAGE;
            }
            o->timeout = (apr_interval_time_t)(secs * APR_USEC_PER_SEC);
            break;
        }
        case OPT_RETRIES:
            o->retries = (int)strtol(optval, &end, 10);
            if (end == optval || *end || o->retries < 0 || o->retries > 1000) {
                cli_error("run: --retries takes a number from 0 to 1000, not '%s'", optval);
                return CLI_USAGE;
            }
            break;
        case OPT_HALT:
            if (parse_halt(o, optval) != 0) {
                cli_error("run: --halt takes now,fail=N or soon,fail=N (N from 1), not '%s'",
                          optval);
                return CLI_USAGE;
            }
            break;
        case OPT_NO_PROGRESS: o->progress = 0; break;
        case OPT_JSON: o->json = 1; break;
        default:
            run_help();
            return CLI_OK;
        }
    }
    if (rv != APR_EOF) {
        /* apr_getopt leaves the offending word at ind - 1 (or at ind when
         * a missing value ran off the end). */
        const char *word = os->ind > 0 && os->ind <= argc ? argv[os->ind - 1] : "?";
        cli_error(rv == APR_BADARG ? "run: option '%s' needs a value (see parkpool run --help)"
                                   : "run: unknown option '%s' (see parkpool run --help)",
                  word);
        return CLI_USAGE;
    }
    o->nwords = argc - os->ind;
    words = apr_palloc(p, (apr_size_t)(o->nwords + 1) * sizeof(*words));
    for (i = 0; i < o->nwords; i++)    /* apr_getopt permuted its own copy */
        words[i] = shown(os->argv[os->ind + i]);
    o->words = words;
    if (o->file && o->nwords > 0) {
        cli_error("run: give tasks with -f or on the command line, not both");
        return CLI_USAGE;
    }
    if (!o->file && !o->type && o->nwords < 2) {
        cli_error("run: no tasks: give TYPE ARG..., --type TYPE or -f FILE");
        return CLI_USAGE;
    }
    if (!o->file && o->type && o->nwords == 0)
        o->file = "-";    /* as xargs: arguments from standard input */
    if (!o->file && (o->check || o->sep == '\0'))
        cli_error("run: warning: --check and -0 apply to -f input only");
    return -1;
}

