/* SPDX-License-Identifier: Apache-2.0 */
/* How parkpool run reports (run.h): the progress bar, --json's objects,
 * --joblog's lines, the summary, and the crash report. */
#include "config.h"
#include "run.h"
#include "cli_os.h"

#include <apr_strings.h>

#include <string.h>

void run_print_summary(run_state *st, int json, int rc, int interrupted)
{
    double secs = (double)(apr_time_now() - st->start) / APR_USEC_PER_SEC;
    apr_uint64_t all = st->done + st->failed + st->cancelled;
    double rate = secs > 0 ? all / secs : 0;

    run_clear_progress(st);
    if (st->o->dry_run && !json)
        fprintf(stderr, "parkpool: dry run: %" APR_UINT64_T_FMT " tasks, none run\n",
                st->submitted);
    else if (json)
        /* JSON Lines: the summary is stdout's last object. */
        printf("{\"summary\":{\"submitted\":%" APR_UINT64_T_FMT ",\"done\":%" APR_UINT64_T_FMT
                ",\"failed\":%" APR_UINT64_T_FMT ",\"cancelled\":%" APR_UINT64_T_FMT
                ",\"wall_s\":%.3f,\"tasks_per_s\":%.1f,\"interrupted\":%s,\"exit\":%d}}\n",
                st->submitted, st->done, st->failed, st->cancelled, secs, rate,
                interrupted ? "true" : "false", rc);
    else
        fprintf(stderr, "parkpool: %" APR_UINT64_T_FMT " done, %" APR_UINT64_T_FMT
                " failed, %" APR_UINT64_T_FMT " cancelled in %.2f s (%.0f tasks/s)\n",
                st->done, st->failed, st->cancelled, secs, rate);
}
void run_clear_progress(run_state *st)
{
    if (st->progress_shown) {
        fputs("\r\033[K", stderr);
        st->progress_shown = 0;
    }
}
/* text as it can be shown on a terminal: control bytes as C escapes
 * (\n, \t, \r, \xHH), a backslash doubled; other bytes as they are. */
const char *run_escaped(const char *text, apr_size_t len, apr_pool_t *p)
{
    static const char hex[] = "0123456789abcdef";
    char *out = apr_palloc(p, 4 * len + 1), *o = out;
    apr_size_t i;

    for (i = 0; i < len; i++) {
        unsigned char c = (unsigned char)text[i];
        if (c == '\\') {
            *o++ = '\\';
            *o++ = '\\';
        }
        else if (c == '\n' || c == '\t' || c == '\r') {
            *o++ = '\\';
            *o++ = c == '\n' ? 'n' : c == '\t' ? 't' : 'r';
        }
        else if (c < 0x20 || c == 0x7f) {
            *o++ = '\\';
            *o++ = 'x';
            *o++ = hex[c >> 4];
            *o++ = hex[c & 15];
        }
        else {
            *o++ = (char)c;
        }
    }
    *o = '\0';
    return out;
}
/* One line, cut to the terminal's width as it is now (a resize must not
 * wrap it into stale lines), the bar narrower on a narrow terminal. */
void run_draw_progress(run_state *st)
{
    apr_uint64_t finished = st->done + st->failed + st->cancelled;
    double secs = (double)(apr_time_now() - st->start) / APR_USEC_PER_SEC;
    double rate = secs > 0 ? finished / secs : 0;
    int width = cli_os_terminal_width(), barlen = width - 50, i, fill = 0;
    char bar[41], line[256];

    barlen = barlen > 40 ? 40 : barlen < 10 ? 10 : barlen;
    if (st->input_done && st->submitted)
        fill = (int)((apr_uint64_t)barlen * finished / st->submitted);
    for (i = 0; i < barlen; i++)
        bar[i] = i < fill ? '#' : '.';
    bar[barlen] = '\0';
    if (st->input_done && st->submitted) {
        double left = rate > 0 ? (st->submitted - finished) / rate : 0;
        apr_snprintf(line, sizeof(line), "[%s] %" APR_UINT64_T_FMT "/%" APR_UINT64_T_FMT
                     " %3d%% %.0f/s ETA %d:%02d", bar, finished, st->submitted,
                     (int)(100 * finished / st->submitted), rate, (int)left / 60, (int)left % 60);
    }
    else {
        apr_snprintf(line, sizeof(line), "[%s] %" APR_UINT64_T_FMT "/? %.0f/s", bar, finished,
                     rate);
    }
    if (width > 1 && (apr_size_t)width - 1 < sizeof(line))
        line[width - 1] = '\0';
    fprintf(stderr, "\r\033[K%s", line);
    fflush(stderr);
    st->progress_shown = 1;
}
/* What became of a task, in one word (--json's "status"). */
static const char *outcome(const cli_task *t)
{
    if (!t->ran || (t->status == PP_ECANCELLED && !t->timed_out))
        return "cancelled";
    if (t->timed_out)
        return "timeout";
    return t->status == APR_SUCCESS ? "ok" : "failed";
}
/* --json: the output as an array of lines (split at LF; bytes after the
 * last LF are a line too). */
typedef struct json_lines {
    cli_json_text text;
    int           open, any;
} json_lines;

static apr_status_t json_piece(const char *data, apr_size_t len, void *baton)
{
    json_lines *j = baton;
    const char *end = data + len, *nl;

    for (; data < end; data = nl + 1) {
        nl = memchr(data, '\n', (apr_size_t)(end - data));
        if (!j->open) {
            fputs(j->any ? ",\"" : "\"", stdout);
            j->open = j->any = 1;
        }
        cli_json_text_put(&j->text, data, (apr_size_t)((nl ? nl : end) - data));
        if (!nl)
            break;
        cli_json_text_end(&j->text);
        fputc('"', stdout);
        j->open = 0;
    }
    return APR_SUCCESS;
}

/* --json: one object per task, on one line. */
apr_status_t run_print_json(const cli_task *t)
{
    json_lines j;
    char msg[256];
    apr_status_t rv;

    printf("{\"seq\":%" APR_UINT64_T_FMT ",\"type\":", t->index + 1);
    cli_json_string(stdout, t->type->name);
    fputs(",\"arg\":", stdout);
    cli_json_bytes(stdout, t->raw, t->rawlen);
    printf(",\"status\":\"%s\",\"error\":", outcome(t));
    if (t->status == APR_SUCCESS && t->ran)
        fputs("null", stdout);
    else
        cli_json_string(stdout, t->timed_out ? "timed out"
                        : !t->ran ? "cancelled before it ran"
                        : pp_strerror(t->status, msg, sizeof(msg)));
    fputs(",\"output\":[", stdout);
    memset(&j, 0, sizeof(j));
    cli_json_text_init(&j.text, stdout);
    rv = cli_outbuf_each((cli_outbuf *)&t->out, json_piece, &j);
    if (j.open) {
        cli_json_text_end(&j.text);
        fputc('"', stdout);
    }
    printf("],\"seconds\":%.6f,\"attempts\":%d}\n",
           t->ran ? (double)(t->ended - t->started) / APR_USEC_PER_SEC : 0.0, t->attempts + 1);
    return rv;
}
/* --joblog: GNU parallel's columns, tab-separated (Seq, Host, Starttime,
 * JobRuntime, Send, Receive, Exitval, Signal, Command). Exitval is a
 * child's exit status where there is one, else 0 or 1; Signal the signal
 * that ended a child. */
void run_print_joblog(FILE *f, const cli_task *t)
{
    int code = t->status == APR_SUCCESS && t->ran ? 0 : 1, sig = 0;

    if (PP_IS_EEXIT(t->status)) {
        code = PP_EEXIT_CODE(t->status);
        if (code > 128) {
            sig = code - 128;
            code = 0;
        }
    }
    fprintf(f, "%" APR_UINT64_T_FMT "\t:\t%.3f\t%.3f\t0\t%" APR_SIZE_T_FMT "\t%d\t%d\t%s %s\n",
            t->index + 1, (double)t->started / APR_USEC_PER_SEC,
            t->ran ? (double)(t->ended - t->started) / APR_USEC_PER_SEC : 0.0,
            t->out.bytes, code, sig, t->type->name, run_escaped(t->raw, t->rawlen, t->p));
}

/* A plugin's task that crashes takes the process with it (in-process
 * plugins share it; parkpool(1) says so). Before it goes: which tasks
 * were running, the results -k was holding (in input order, the running
 * ones' missing), and the counts so far. Only async-signal-safe calls
 * from here on: write(2) through cli_os_write, no stdio, no locks; the
 * state is read as it is, a torn read being better than no report. */
static void say(const char *s)
{
    cli_os_write(2, s, strlen(s));
}

static void say_count(apr_uint64_t n, const char *what)
{
    char digits[24], *d = digits + sizeof(digits);

    *--d = '\0';
    do
        *--d = (char)('0' + n % 10);
    while ((n /= 10) > 0);
    say(d);
    say(what);
}

void run_crash_report(run_state *st, const char *what)
{
    apr_uint64_t i, held = 0, lost = 0;
    int w;

    say("\nparkpool: the process is ending: ");
    say(what);
    say(" in a task (plugins run inside parkpool's process)\n");
    if (!st)
        return;
    for (w = 0; w < MAX_JOBS; w++) {
        cli_task *t = atomic_load_explicit(&st->slot[w], memory_order_relaxed);
        if (t) {
            say("parkpool: was running: ");
            say(t->text);
            say("\n");
        }
    }
    if (st->keep_order) {
        for (i = st->next_print; i < st->next_print + WINDOW; i++) {
            cli_task *t = st->ring[i % WINDOW];
            if (t && t->index == i) {
                held++;
                if (!cli_outbuf_salvage(&t->out, 1))
                    lost++;
            }
        }
        if (held) {
            say("parkpool: ");
            say_count(held, " finished results held for -k printed, in input order, gaps where"
                            " tasks had not finished\n");
        }
        if (lost)
            say_count(lost, " of them in part only (the rest was in a temporary file)\n");
    }
    say("parkpool: so far: ");
    say_count(st->done, " done, ");
    say_count(st->failed, " failed, ");
    say_count(st->cancelled, " cancelled\n");
}

