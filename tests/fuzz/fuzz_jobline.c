/* SPDX-License-Identifier: Apache-2.0 */
/*
 * libFuzzer target: pp_job_line_split, the parser of the job lines that
 * `parkpool run` reads from files and parkpoold from its clients. Besides
 * the sanitizers' checks, it asserts what the callers rely on: type and
 * arg point into the line, type is a non-empty run of non-blanks, arg
 * starts one byte past it, and a comment or blank line gives APR_EOF.
 */
#include "config.h"
#include "parkpool/plugin.h"

#include <assert.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *line = malloc(size + 1), *type, *arg;
    apr_status_t rv;

    if (!line)
        return 0;
    memcpy(line, data, size);
    line[size] = '\0';    /* a line ends at its first NUL, as fgets gives it */
    rv = pp_job_line_split(line, &type, &arg);
    if (rv == APR_SUCCESS || rv == APR_EINVAL) {
        assert(type && type >= line && type < line + size);
        assert(*type && *type != ' ' && *type != '\t' && *type != '#');
        assert(!strpbrk(type, " \t"));
        if (rv == APR_SUCCESS) {
            assert(arg && arg == type + strlen(type) + 1 && arg <= line + size);
        }
        else {
            assert(!arg);
        }
    }
    else {
        assert(rv == APR_EOF && !type && !arg);
    }
    free(line);
    return 0;
}
