# SPDX-License-Identifier: Apache-2.0
# A redis-server of a script's own, for tests/sh/queue.sh and
# bench/fleet.sh: on a loopback port, its files in the script's temporary
# folder. Sourced.

# pp_redis_missing PARKPOOLD: why no queue can run here (no redis-server
# or redis-cli, or a parkpoold built without hiredis), or nothing.
pp_redis_missing() {
    command -v redis-server >/dev/null 2>&1 && command -v redis-cli >/dev/null 2>&1 || {
        echo "redis-server not installed (Debian: apt-get install redis-server)"; return 0; }
    "$1" --queue redis://127.0.0.1:1/probe -P /nonexistent 2>&1 | grep -q "without hiredis" &&
        echo "parkpoold built without hiredis"
    return 0
}

# pp_redis_start DIR PORT APPENDONLY: start one on 127.0.0.1:PORT with its
# files in DIR (APPENDONLY yes: on disk, so that a restart keeps what was
# acknowledged); 0 once it answers, within 10 s.
pp_redis_start() {
    redis-server --port "$2" --bind 127.0.0.1 --save "" --appendonly "$3" --dir "$1" \
        --logfile "$1/redis.log" --daemonize yes >/dev/null || return 1
    _i=0
    while [ "$(redis-cli -p "$2" ping 2>/dev/null)" != PONG ] && [ $_i -lt 100 ]; do
        sleep 0.1
        _i=$((_i + 1))
    done
    [ "$(redis-cli -p "$2" ping 2>/dev/null)" = PONG ]
}
