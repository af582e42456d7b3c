/* SPDX-License-Identifier: Apache-2.0 */
/*
 * parkpool: run plugin tasks on a parkpool pool from the command line.
 *
 *   parkpool plugins [-P DIR]... [--json]
 *   parkpool run [-P DIR]... [-j N] [-k] [-f FILE|-] [--progress|--no-progress]
 *                [--json] [TYPE ARG...]
 *   parkpool bench [BENCHMARK OPTION]...
 */
#include "config.h"
#include "pp_paths.h"
#include "cli.h"
#include "cli_os.h"

#include <apr_env.h>
#include <apr_file_info.h>
#include <apr_general.h>
#include <apr_lib.h>
#include <apr_strings.h>

#include <stdarg.h>
#include <stdio.h>
#include <string.h>


void cli_error(const char *fmt, ...)
{
    va_list ap;

    fputs("parkpool: ", stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

const char *cli_build_tree_path(const char *argv0, const char *rel, apr_pool_t *p)
{
    const char *self = cli_os_self_path(p), *name;
    char *dir, *path;
    apr_size_t len;
    apr_finfo_t fi;

    if (!self)
        self = argv0 ? argv0 : "";
    /* apr_filepath_name_get knows the OS's separators ('\\' too on Windows). */
    name = apr_filepath_name_get(self);
    len = (apr_size_t)(name - self);
    if (len < 2)
        return NULL;
    dir = apr_pstrmemdup(p, self, len - 1);
    if (strcmp(apr_filepath_name_get(dir), ".libs") != 0)
        return NULL;
    if (apr_filepath_merge(&path, dir, rel, APR_FILEPATH_NATIVE, p) != APR_SUCCESS)
        return NULL;
    return apr_stat(&fi, path, APR_FINFO_TYPE, p) == APR_SUCCESS ? path : NULL;
}

static void load_dir(pp_registry_t *reg, const char *dir, int must_exist, apr_pool_t *p)
{
    char err[8192];
    apr_finfo_t fi;

    if (!must_exist && apr_stat(&fi, dir, APR_FINFO_TYPE, p) != APR_SUCCESS)
        return;
    if (pp_registry_load_dir(reg, dir, err, sizeof(err)) != APR_SUCCESS) {
        char *line, *last;
        for (line = apr_strtok(err, "\n", &last); line; line = apr_strtok(NULL, "\n", &last))
            cli_error("warning: %s", line);
    }
}

apr_status_t cli_load_plugins(pp_registry_t **reg, apr_array_header_t *dirs,
                              const char *argv0, apr_pool_t *p)
{
    char *env = NULL;
    apr_array_header_t *path;
    const char *tree;
    apr_status_t rv;
    int i;

    rv = pp_registry_create(reg, p);
    if (rv != APR_SUCCESS)
        return rv;
    for (i = 0; i < dirs->nelts; i++)
        load_dir(*reg, APR_ARRAY_IDX(dirs, i, const char *), 1, p);
    /* Split on the OS's list separator: ':' on POSIX, ';' on Windows. */
    if (apr_env_get(&env, "PARKPOOL_PLUGIN_PATH", p) == APR_SUCCESS && env
        && apr_filepath_list_split(&path, env, p) == APR_SUCCESS)
        for (i = 0; i < path->nelts; i++)
            if (*APR_ARRAY_IDX(path, i, const char *))
                load_dir(*reg, APR_ARRAY_IDX(path, i, const char *), 0, p);
    tree = cli_build_tree_path(argv0, "../plugins/.libs", p);
    load_dir(*reg, tree ? tree : PP_PLUGIN_DIR, 0, p);
    return APR_SUCCESS;
}

int cli_plugins(int argc, const char *const *argv, apr_pool_t *p)
{
    static const apr_getopt_option_t opts[] = {
        { "plugin-dir", 'P', 1, "load plugins from DIR" },
        { "json", 'J', 0, "print JSON" },
        { "help", 'h', 0, "this help" },
        { NULL, 0, 0, NULL }
    };
    apr_array_header_t *dirs = apr_array_make(p, 4, sizeof(const char *));
    apr_getopt_t *os;
    pp_registry_t *reg;
    const char *optval;
    int opt, json = 0;
    apr_size_t i, n;
    apr_status_t rv;

    apr_getopt_init(&os, p, argc, argv);
    os->errfn = NULL;
    os->interleave = 1;    /* options may follow the tasks; "--" ends them */
    while ((rv = apr_getopt_long(os, opts, &opt, &optval)) == APR_SUCCESS) {
        if (opt == 'P')
            APR_ARRAY_PUSH(dirs, const char *) = optval;
        else if (opt == 'J')
            json = 1;
        else {
            printf("usage: parkpool plugins [-P DIR]... [--json]\n");
            return CLI_OK;
        }
    }
    if (rv != APR_EOF || os->ind < argc) {
        cli_error("plugins: bad option or argument (see parkpool plugins --help)");
        return CLI_USAGE;
    }
    cli_load_plugins(&reg, dirs, argv[0], p);
    n = pp_registry_count(reg);
    if (json)
        printf("{\"types\":[");
    for (i = 0; i < n; i++) {
        const pp_task_type_t *t = pp_registry_type(reg, i);
        const pp_plugin_info_t *info = pp_registry_owner(reg, t);
        const pp_plugin_info_t *prev = i ? pp_registry_owner(reg, pp_registry_type(reg, i - 1)) : NULL;

        if (json) {
            printf("%s{\"name\":", i ? "," : "");
            cli_json_string(stdout, t->name);
            printf(",\"summary\":");
            cli_json_string(stdout, t->summary);
            printf(",\"plugin\":");
            cli_json_string(stdout, info->name);
            printf(",\"version\":");
            cli_json_string(stdout, info->version);
            printf(",\"path\":");
            cli_json_string(stdout, info->path ? info->path : "");
            printf(",\"idempotent\":%s}", pp_registry_idempotent(reg, t) ? "true" : "false");
            continue;
        }
        if (info != prev)
            printf("%s%s %s  (%s)\n", i ? "\n" : "", info->name, info->version,
                   info->path ? info->path : "built in");
        /* Whether a queue may run it twice safely (at least once). */
        printf("  %-14s %s%s\n", t->name, t->summary,
               pp_registry_idempotent(reg, t) ? " [idempotent]" : "");
    }
    if (json)
        printf("]}\n");
    else if (n == 0)
        printf("no plugins found (use -P DIR or PARKPOOL_PLUGIN_PATH)\n");
    return CLI_OK;
}

static void usage(FILE *f)
{
    fprintf(f,
        "usage: parkpool COMMAND [OPTION]...\n"
        "\n"
        "  parkpool plugins [-P DIR]... [--json]\n"
        "      list the plugins found and their task types\n"
        "  parkpool run [-P DIR]... [-j N] [-k] [-f FILE|-] [--progress|--no-progress]\n"
        "               [--json] [TYPE ARG...]\n"
        "      run tasks: one 'TYPE ARG' per line of FILE (- for standard input), or\n"
        "      TYPE with each further word as one task's argument\n"
        "  parkpool bench [--quick] [--reps N] [--timeout S] [--out DIR] [--only POOLS]\n"
        "      run the benchmark against the peer pools and print the table\n"
        "  parkpool submit --queue redis://HOST[:PORT]/STREAM [-f FILE|-] [--type TYPE]\n"
        "                  [--wait [--json]]\n"
        "      add the job lines to a Redis stream that parkpoold --queue workers run;\n"
        "      --wait prints their results as run does\n"
        "  parkpool queue-stats --queue redis://HOST[:PORT]/STREAM\n"
        "      the stream's length, pending entries per consumer, dead letters\n"
        "\n"
        "  -P, --plugin-dir DIR  load plugins from DIR (before $PARKPOOL_PLUGIN_PATH\n"
        "                        and the installed %s)\n"
        "  -j, --jobs N          N worker threads (default: one per CPU)\n"
        "  -k, --keep-order      print results in input order\n"
        "  -f, --file FILE       read tasks from FILE\n"
        "      --progress        force the progress bar (default: when stderr is a terminal)\n"
        "      --no-progress     never show it\n"
        "      --json            print the summary as JSON\n"
        "  -h, --help            this help;  -V, --version  the version\n"
        "\n"
        "Exit status: 0 all tasks succeeded, 1 some failed, 2 bad usage or input,\n"
        "130 interrupted. See parkpool(1).\n", PP_PLUGIN_DIR);
}

int main(int argc, const char *const *argv)
{
    apr_pool_t *p;
    int rc;

    if (apr_app_initialize(&argc, &argv, NULL) != APR_SUCCESS) {
        fprintf(stderr, "parkpool: cannot initialise APR\n");
        return CLI_USAGE;
    }
    apr_pool_create(&p, NULL);
    /* Before cli_os_init(), which blocks Ctrl-C's signal for its watcher:
     * the benchmark inherits the signal mask and must stay interruptible. */
    if (argc >= 2 && !strcmp(argv[1], "bench")) {
        rc = cli_bench(argc - 1, argv + 1, p);
        apr_pool_destroy(p);
        apr_terminate();
        return rc;
    }
    cli_os_init();
    if (argc < 2) {
        usage(stderr);
        rc = CLI_USAGE;
    }
    else if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help") || !strcmp(argv[1], "help")) {
        usage(stdout);
        rc = CLI_OK;
    }
    else if (!strcmp(argv[1], "-V") || !strcmp(argv[1], "--version")) {
        printf("parkpool %s (park backend: %s)\n", pp_version(), pp_park_backend());
        rc = CLI_OK;
    }
    else if (!strcmp(argv[1], "plugins")) {
        rc = cli_plugins(argc - 1, argv + 1, p);
    }
    else if (!strcmp(argv[1], "run")) {
        rc = cli_run(argc - 1, argv + 1, p);
    }
    else if (!strcmp(argv[1], "submit")) {
        rc = cli_submit(argc - 1, argv + 1, p);
    }
    else if (!strcmp(argv[1], "queue-stats")) {
        rc = cli_queue_stats(argc - 1, argv + 1, p);
    }
    else {
        cli_error("unknown command '%s' (try parkpool --help)", argv[1]);
        rc = CLI_USAGE;
    }
    apr_pool_destroy(p);
    apr_terminate();
    return rc;
}
