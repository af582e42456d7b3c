/* SPDX-License-Identifier: Apache-2.0 */
/*
 * JSON strings from any bytes (cli.h). Task output is binary as often as
 * not, and a JSON Lines stream must stay valid for every line (jq -c .):
 * well-formed UTF-8 passes as it is, control bytes become \uXXXX escapes,
 * and each byte of a malformed sequence is taken as Latin-1 (\u00XX), so
 * nothing is dropped and ASCII output is unchanged.
 */
#include "config.h"
#include "cli.h"

#include <string.h>

void cli_json_text_init(cli_json_text *j, FILE *f)
{
    memset(j, 0, sizeof(*j));
    j->f = f;
}

static void put_escaped(FILE *f, unsigned char c)
{
    switch (c) {
    case '"': fputs("\\\"", f); break;
    case '\\': fputs("\\\\", f); break;
    case '\n': fputs("\\n", f); break;
    case '\r': fputs("\\r", f); break;
    case '\t': fputs("\\t", f); break;
    default:
        if (c < 0x20 || c == 0x7f || c >= 0x80)
            fprintf(f, "\\u%04x", c);
        else
            fputc(c, f);
    }
}

/* The bytes held for a sequence that turned out malformed, as Latin-1. */
static void flush_pending(cli_json_text *j)
{
    int i;

    for (i = 0; i < j->npend; i++)
        put_escaped(j->f, j->pend[i]);
    j->npend = j->need = 0;
}

/* How many continuation bytes lead byte c announces, or -1. */
static int continuations(unsigned char c)
{
    if (c >= 0xc2 && c <= 0xdf)
        return 1;
    if (c >= 0xe0 && c <= 0xef)
        return 2;
    if (c >= 0xf0 && c <= 0xf4)
        return 3;
    return -1;
}

/* Whether c may follow the bytes pending: a continuation byte, in the
 * narrower range the lead byte allows for the first one (no overlong
 * forms, no surrogates, nothing past U+10FFFF). */
static int may_follow(const cli_json_text *j, unsigned char c)
{
    unsigned char lo = 0x80, hi = 0xbf;

    if (j->npend == 1) {
        switch (j->pend[0]) {
        case 0xe0: lo = 0xa0; break;
        case 0xed: hi = 0x9f; break;
        case 0xf0: lo = 0x90; break;
        case 0xf4: hi = 0x8f; break;
        default: break;
        }
    }
    return c >= lo && c <= hi;
}

void cli_json_text_put(cli_json_text *j, const char *data, apr_size_t len)
{
    apr_size_t i;

    for (i = 0; i < len; i++) {
        unsigned char c = (unsigned char)data[i];

        if (j->need) {
            if (may_follow(j, c)) {
                j->pend[j->npend++] = c;
                if (--j->need == 0) {
                    fwrite(j->pend, 1, (size_t)j->npend, j->f);
                    j->npend = 0;
                }
                continue;
            }
            flush_pending(j);    /* and c starts afresh */
        }
        if (c < 0x80) {
            put_escaped(j->f, c);
        }
        else if (continuations(c) > 0) {
            j->pend[0] = c;
            j->npend = 1;
            j->need = continuations(c);
        }
        else {
            put_escaped(j->f, c);
        }
    }
}

void cli_json_text_end(cli_json_text *j)
{
    flush_pending(j);
}

void cli_json_bytes(FILE *f, const char *data, apr_size_t len)
{
    cli_json_text j;

    fputc('"', f);
    cli_json_text_init(&j, f);
    cli_json_text_put(&j, data, len);
    cli_json_text_end(&j);
    fputc('"', f);
}

void cli_json_string(FILE *f, const char *s)
{
    cli_json_bytes(f, s, strlen(s));
}
