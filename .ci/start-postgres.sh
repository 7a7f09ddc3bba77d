#!/usr/bin/env bash
# Starts a throw-away PostgreSQL server on 127.0.0.1:${PGPORT:-55432} (trust auth, data in /tmp) for the test run.
# Installs Debian's postgresql package when it is missing. Prints the connection URL on its last line.
set -euo pipefail
PORT="${PGPORT:-55432}"
DATA="${PGDATA_DIR:-/tmp/gatehouse-ci-pg}"
if ! ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >&2
  apt-get install -y -qq postgresql >&2
fi
BIN="$(dirname "$(ls -d /usr/lib/postgresql/*/bin/initdb | sort -V | tail -n 1)")"
RUN_AS=()
if [ "$(id -u)" = "0" ]; then RUN_AS=(runuser -u postgres --); fi
if [ -f "$DATA/postmaster.pid" ]; then "${RUN_AS[@]}" "$BIN/pg_ctl" -D "$DATA" stop -m fast >&2 || true; fi
rm -rf "$DATA"
mkdir -p "$DATA"
[ "$(id -u)" = "0" ] && chown postgres:postgres "$DATA"
"${RUN_AS[@]}" "$BIN/initdb" -D "$DATA" -U postgres -A trust -E UTF8 >/dev/null
"${RUN_AS[@]}" "$BIN/pg_ctl" -D "$DATA" -l "$DATA/server.log" -w \
  -o "-p $PORT -c listen_addresses=127.0.0.1 -c unix_socket_directories=$DATA -c max_connections=200 -c fsync=off" start >&2
echo "postgres://postgres@127.0.0.1:$PORT/postgres"
