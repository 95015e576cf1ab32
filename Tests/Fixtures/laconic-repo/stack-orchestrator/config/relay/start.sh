#!/bin/sh
# Starts the relay with the settings mounted beside it.
set -e
. /opt/relay.env
echo "relay: mode=${RELAY_MODE} workers=${RELAY_WORKERS} queue=${QUEUE_DIR}"
exec sleep infinity
